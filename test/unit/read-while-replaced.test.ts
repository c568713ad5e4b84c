// A GET that has begun reads the object it found, whole, even when a write replaces or deletes that
// object while the body streams (as S3 answers). Stores that keep bodies as pieces stream a large
// body a batch of pieces per read; a write that drops such a body while this runtime still
// streams it holds it instead (schema.ts, HELD_BODIES), and the stream's end deletes it. Over
// every store, through the handler.
import { describe, it, expect } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { newService, send, buildRequest } from '../support/service.ts';
import { STORE_KINDS, contents, integrity, SOUND } from '../support/stores.ts';

const B = 'http://reads.svc.localhost';
const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');

for (const kind of STORE_KINDS) {
  describe(`a GET that has begun (${kind} store)`, () => {
    it('reads the whole object it found while a PUT replaces it and a DELETE removes it; nothing is left held', async () => {
      const { handle, store } = await newService({ kind });
      expect((await send(handle, 'PUT', `${B}/`)).status).toBe(200);
      // Over 4 MiB, the batch a streaming GET reads at a time: the body is read in three steps.
      const old = randomBytes(9 * 1024 * 1024 + 5);
      expect((await send(handle, 'PUT', `${B}/k`, { body: old })).status).toBe(200);

      const res = await handle(await buildRequest('GET', `${B}/k`));
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      const chunks: Uint8Array[] = [];
      const first = await reader.read();
      chunks.push(first.value!);
      expect(first.value!.byteLength).toBeLessThan(old.byteLength);

      expect((await send(handle, 'PUT', `${B}/k`, { body: 'replaced' })).status).toBe(200);
      expect((await send(handle, 'DELETE', `${B}/k`)).status).toBeLessThan(300);
      expect((await send(handle, 'GET', `${B}/k`)).status).toBe(404);
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
      }
      expect(md5(Buffer.concat(chunks))).toBe(md5(old));
      // The stream's end deletes what was held for it.
      await expect.poll(async () => (await contents(store)).heldBodies.length).toBe(0);
      expect(integrity(await contents(store))).toEqual(SOUND);
    });

    it('a stream cancelled part-way lets go of what was held for it', async () => {
      const { handle, store } = await newService({ kind });
      expect((await send(handle, 'PUT', `${B}/`)).status).toBe(200);
      expect((await send(handle, 'PUT', `${B}/k`, { body: randomBytes(9 * 1024 * 1024) })).status).toBe(200);
      const res = await handle(await buildRequest('GET', `${B}/k`));
      const reader = res.body!.getReader();
      await reader.read();
      expect((await send(handle, 'DELETE', `${B}/k`)).status).toBeLessThan(300);
      await reader.cancel();
      await expect.poll(async () => (await contents(store)).heldBodies.length).toBe(0);
      const c = await contents(store);
      expect([c.bodies, integrity(c)]).toEqual([[], SOUND]);
    });
  });
}
