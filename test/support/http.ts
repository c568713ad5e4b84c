// One request over a real socket with node:http (fetch cannot set Host or send a chunked body
// with its parts apart), on a connection of its own, read whole. Signing is the caller's.
import http from 'node:http';

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  text: string;
}

export interface RawRequest {
  method: string;
  path: string;
  /** Sent as they are: the caller sets Content-Length, Host and any signature. */
  headers?: Record<string, string>;
  body?: Buffer;
  /** Write the body in two parts (with Transfer-Encoding: chunked among `headers`). */
  split?: boolean;
  /** Connect to this address (default 127.0.0.1). */
  address?: string;
}

export function rawRequest(port: number, o: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: o.address ?? '127.0.0.1', port, method: o.method, path: o.path, headers: o.headers ?? {}, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const b = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: b, text: b.toString('utf8') });
      });
      res.on('error', reject);
      res.on('aborted', () => reject(new Error('response aborted')));
    });
    req.on('error', reject);
    req.setTimeout(20_000, () => req.destroy(new Error('request timed out')));
    if (o.body !== undefined && o.split) {
      const mid = Math.floor(o.body.length / 2);
      req.write(o.body.subarray(0, mid));
      req.end(o.body.subarray(mid));
    } else req.end(o.body);
  });
}
