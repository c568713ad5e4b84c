// Issue 23 (noted with the findings): signature-shaped text the service does not read reached the
// log verbatim — a URL fragment, a parameter whose *name* carries the signature
// (`Signature%3D…`), a proxy's X-Forwarded-Authorization, an `SVC key:signature` inside another
// header. Each is sent through the handler, and none of the signature's characters may reach a log
// entry, the request log ring or the server's stdout line (one redaction, sw/core/redact.ts).
import { describe, it, expect } from 'vitest';
import { IDBFactory } from 'fake-indexeddb';
import { newService } from '../support/service.ts';
import { signHeaders } from '../support/sign.ts';
import { formatLogLine } from '../../node/server.ts';
import { createRequestLog, readLog } from '../../sw/log/ring.ts';
import { redactEntry } from '../../sw/core/redact.ts';
import type { LogEntry } from '../../sw/core/handler.ts';

const SECRET = 'Zq9SecretSignatureValueXy7';

const attacks: { what: string; url: string; headers?: [string, string][] }[] = [
  { what: 'a fragment', url: `http://svc.localhost/?x=1#Signature=${SECRET}` },
  { what: 'a fragment without a query', url: `http://svc.localhost/#a=b&signature=${SECRET}` },
  { what: 'a parameter name carrying the value', url: `http://svc.localhost/?Signature%3D${SECRET}` },
  { what: 'the same, lower case and encoded', url: `http://svc.localhost/?sig%6Eature%3d${SECRET}&x=1` },
  { what: 'X-Forwarded-Authorization', url: 'http://svc.localhost/', headers: [['x-forwarded-authorization', `SVC svcadmin:${SECRET}`]] },
  { what: 'a header named like a signature', url: 'http://svc.localhost/', headers: [['x-svc-signature', SECRET]] },
  { what: 'SVC key:signature inside another header', url: 'http://svc.localhost/', headers: [['x-note', `sent as SVC svcadmin:${SECRET}, twice`]] },
  { what: 'a Referer with a fragment signature', url: 'http://svc.localhost/', headers: [['referer', `http://app.test/page#Signature=${SECRET}`]] },
  { what: 'NOS key:signature inside another header', url: 'http://svc.localhost/', headers: [['x-note', `NOS svcadmin:${SECRET}`]] },
  { what: 'an X-Amz-Signature parameter', url: `http://svc.localhost/?X-Amz-Signature=${SECRET}` },
  { what: 'a session token parameter', url: `http://svc.localhost/?x-amz-security-token=${SECRET}` },
  { what: 'a session token header', url: 'http://svc.localhost/', headers: [['x-amz-security-token', SECRET]] },
  { what: 'a SigV4 signature inside another header', url: 'http://svc.localhost/', headers: [['x-note', `Signature=${'ab'.repeat(32)}`]] },
];

describe('signature-shaped text nowhere in a log', () => {
  for (const a of attacks) {
    it(a.what, async () => {
      const entries: LogEntry[] = [];
      const factory = new IDBFactory();
      const ring = createRequestLog({ indexedDB: factory, database: 'sig-log', channel: 'sig-log' });
      const writes: Promise<void>[] = [];
      const { handle } = await newService({ onLog: (e) => {
        entries.push(e);
        const w = ring.write(e);
        writes.push(w);
        return w;
      } });
      const headers = new Headers(a.headers ?? []);
      signHeaders('GET', a.url, headers);
      const r = await handle(new Request(a.url, { headers }));
      expect(r.status).toBeLessThan(500);
      await Promise.all(writes);
      const stored = await readLog(10, factory, 'sig-log');
      expect(stored.length).toBe(1);
      const seen = [
        ...entries.map((e) => JSON.stringify(e)),
        ...entries.map((e) => formatLogLine(e)),
        ...stored.map((e) => JSON.stringify(e)),
      ];
      expect(entries.length).toBe(1);
      for (const text of seen) {
        expect(text, a.what).not.toContain(SECRET);
        expect(text, a.what).not.toContain('ab'.repeat(32));
      }
      // Redacting again changes nothing more.
      expect(redactEntry(redactEntry(entries[0]!))).toEqual(redactEntry(entries[0]!));
    });
  }
});

describe('S3 signatures nowhere in a log', () => {
  it('an S3-signed request keeps its Credential and SignedHeaders, not its Signature; a presigned one keeps X-Amz-Credential only', async () => {
    const { SignatureV4 } = await import('@smithy/signature-v4');
    const { Sha256 } = await import('@aws-crypto/sha256-js');
    const signer = new SignatureV4({
      service: 's3', region: 'us-east-1', sha256: Sha256, uriEscapePath: false, applyChecksum: false,
      credentials: { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret', sessionToken: SECRET },
    });
    const entries: LogEntry[] = [];
    const { handle } = await newService({ onLog: (e) => void entries.push(e) });
    const base = { method: 'GET', protocol: 'http:', hostname: 's3.localhost', path: '/', query: {} };
    const signed = await signer.sign({ ...base, headers: { host: 's3.localhost', 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } });
    await handle(new Request('http://s3.localhost/', { headers: signed.headers }));
    const presigned = await signer.presign({ ...base, headers: { host: 's3.localhost' } }, { expiresIn: 60 });
    const query = new URLSearchParams(presigned.query as Record<string, string>);
    await handle(new Request(`http://s3.localhost/?${query}`));
    expect(entries.length).toBe(2);
    const signatures = [/Signature=([0-9a-f]{64})/.exec(signed.headers.authorization!)![1]!, query.get('X-Amz-Signature')!];
    for (const e of entries) {
      for (const text of [JSON.stringify(e), formatLogLine(e)]) {
        for (const sig of signatures) expect(text).not.toContain(sig);
        expect(text).not.toContain(SECRET);
        expect(text).toContain('svcadmin');
      }
    }
    const auth = entries[0]!.requestHeaders.find(([n]) => n === 'authorization')![1];
    expect(auth).toMatch(/^AWS4-HMAC-SHA256 Credential=svcadmin\/\d{8}\/us-east-1\/s3\/aws4_request, SignedHeaders=[a-z0-9;-]+, Signature=…$/);
  });
});
