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
      for (const text of seen) expect(text, a.what).not.toContain(SECRET);
      // Redacting again changes nothing more.
      expect(redactEntry(redactEntry(entries[0]!))).toEqual(redactEntry(entries[0]!));
    });
  }
});
