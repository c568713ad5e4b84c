// The handler reports one log entry per request, with what the request log needs.
import { it, expect } from 'vitest';
import { newService, send } from '../support/service.ts';
import type { LogEntry } from '../../sw/core/handler.ts';

it('one entry per request, errors with their code', async () => {
  const entries: LogEntry[] = [];
  const { handle } = await newService({ onLog: (e) => { entries.push(e); } });
  await send(handle, 'PUT', 'http://photos.svc.localhost/');
  await send(handle, 'PUT', 'http://photos.svc.localhost/a/b.txt', { body: 'hello' });
  await send(handle, 'GET', 'http://photos.svc.localhost/a/b.txt');
  await send(handle, 'GET', 'http://photos.svc.localhost/missing', { auth: 'anon' });
  await send(handle, 'HEAD', 'http://photos.svc.localhost/a/b.txt');
  expect(entries.map((e) => [e.operation, e.status, e.code ?? ''])).toEqual([
    ['CreateBucket', 200, ''],
    ['PutObject', 200, ''],
    ['GetObject', 200, ''],
    ['GetObject', 403, 'AccessDenied'],
    ['HeadObject', 200, ''],
  ]);
  expect(entries[1]).toMatchObject({ method: 'PUT', bucket: 'photos', key: 'a/b.txt', bytesIn: 5, accessKeyId: 'svcadmin' });
  expect(entries[2]).toMatchObject({ bytesOut: 5 });
  expect(entries[3]!.accessKeyId).toBeUndefined();
  expect(entries[4]!.bytesOut).toBe(0);
  expect(new Set(entries.map((e) => e.requestId)).size).toBe(5);
});

it('an unexpected failure is a 500 InternalError with the XML body, reported once', async () => {
  const errors: unknown[] = [];
  const { handle, store } = await newService({ onInternalError: (e) => errors.push(e) });
  store.getBucket = async () => {
    throw new Error('disk on fire');
  };
  const r = await send(handle, 'GET', 'http://photos.svc.localhost/x');
  expect(r.status).toBe(500);
  expect(r.text).toContain('<Code>InternalError</Code>');
  expect(r.text).not.toContain('disk on fire');
  expect(errors).toHaveLength(1);
});
