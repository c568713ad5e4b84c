// Both MD5 engines agree with node:crypto (OpenSSL) on every size and chunking.
import { describe, it, expect } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { createMd5, md5OfBlob } from '../../protocol/md5.ts';

const sizes = [0, 1, 55, 56, 63, 64, 65, 1000, 64 * 1024 + 3, 3 * 1024 * 1024 + 17];

describe.each(['hash-wasm', 'spark-md5'] as const)('%s', (engine) => {
  it.each(sizes)('%i bytes in uneven chunks', async (size) => {
    const data = randomBytes(size);
    const h = await createMd5(engine);
    for (let at = 0, step = 1; at < size; at += step, step = step * 3 + 1) h.update(data.subarray(at, at + step));
    expect(h.digest()).toBe(createHash('md5').update(data).digest('hex'));
  });
});

it('md5OfBlob reads a large Blob in slices', async () => {
  const data = randomBytes(9 * 1024 * 1024 + 5);
  expect(await md5OfBlob(new Blob([data]))).toBe(createHash('md5').update(data).digest('hex'));
});
