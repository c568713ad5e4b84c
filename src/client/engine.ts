// What this browser's fetch can send, found out by asking it, never by its name.

let streams: boolean | undefined;

/**
 * Whether fetch() can send a ReadableStream as a request body. Chromium can (with `duplex:
 * 'half'`); Firefox does not read the `duplex` option and sends the text "[object ReadableStream]"
 * (with a text/plain Content-Type), and WebKit refuses such a request (NotSupportedError).
 */
export function canStreamUploads(): boolean {
  if (streams !== undefined) return streams;
  try {
    let asked = false;
    const init = {
      method: 'POST',
      body: new ReadableStream(),
      get duplex() {
        asked = true;
        return 'half';
      },
    };
    const typed = new Request('http://localhost/', init as RequestInit).headers.has('content-type');
    streams = asked && !typed;
  } catch {
    streams = false;
  }
  return streams;
}
