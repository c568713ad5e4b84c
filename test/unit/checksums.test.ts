// protocol/checksums.ts against AWS's own implementations (@aws-crypto/crc32 and crc32c, what the
// AWS SDK for JavaScript computes its default checksums with) and node:crypto, over random bodies
// fed in random slices, and the standard check values.
import { describe, it, expect } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { AwsCrc32 } from '@aws-crypto/crc32';
import { AwsCrc32c } from '@aws-crypto/crc32c';
import { CHECKSUM_ALGORITHMS, checksumAlgorithmOf, checksumHeader, createChecksum, createSha256, type ChecksumAlgorithm, type ChecksumEngine } from '../../protocol/checksums.ts';

async function theirs(a: ChecksumAlgorithm, data: Uint8Array): Promise<string> {
  if (a === 'SHA1' || a === 'SHA256') return createHash(a === 'SHA1' ? 'sha1' : 'sha256').update(data).digest('base64');
  const h = a === 'CRC32' ? new AwsCrc32() : new AwsCrc32c();
  h.update(data);
  return Buffer.from(await h.digest()).toString('base64');
}

async function ours(a: ChecksumAlgorithm, data: Uint8Array, slices: number, engine?: ChecksumEngine): Promise<string> {
  const h = await createChecksum(a, engine);
  let at = 0;
  for (let i = 0; i < slices && at < data.byteLength; i++) {
    const n = i === slices - 1 ? data.byteLength - at : Math.floor(Math.random() * (data.byteLength - at + 1));
    h.update(data.subarray(at, at + n));
    at += n;
  }
  if (at < data.byteLength) h.update(data.subarray(at));
  return h.digest();
}

describe('S3 checksums', () => {
  for (const a of CHECKSUM_ALGORITHMS) {
    it(`${a}: as AWS's own code computes it, over bodies of 0 B to 1 MiB fed in any slicing`, async () => {
      for (const size of [0, 1, 3, 64, 1000, 65_537, 1024 * 1024]) {
        const data = randomBytes(size);
        const want = await theirs(a, data);
        for (const slices of [1, 2, 7]) {
          expect(await ours(a, data, slices), `${size} bytes in ${slices} slices`).toBe(want);
          // Where WebAssembly is refused (a Content-Security-Policy without 'wasm-unsafe-eval').
          expect(await ours(a, data, slices, 'fallback'), `${size} bytes in ${slices} slices, without WebAssembly`).toBe(want);
        }
      }
    });
  }

  it('the standard check values, the header names, the algorithm names requests carry', async () => {
    const nine = new TextEncoder().encode('123456789');
    expect(Buffer.from(await ours('CRC32', nine, 1), 'base64').toString('hex')).toBe('cbf43926');
    expect(Buffer.from(await ours('CRC32C', nine, 1), 'base64').toString('hex')).toBe('e3069283');
    expect(await ours('CRC32', new TextEncoder().encode('hello world'), 1)).toBe('DUoRhQ==');
    expect(checksumHeader('CRC32C')).toBe('x-amz-checksum-crc32c');
    expect([checksumAlgorithmOf('crc32'), checksumAlgorithmOf('SHA256'), checksumAlgorithmOf('CRC64NVME'), checksumAlgorithmOf(null)]).toEqual(['CRC32', 'SHA256', undefined, undefined]);
  });
});

describe('the payload hash', () => {
  it('is the hex SHA-256 of the bytes, fed in any slicing', async () => {
    const data = new Uint8Array(300_000).map((_, i) => (i * 7919) % 251);
    const h = await createSha256();
    for (let at = 0; at < data.byteLength; at += 65_537) h.update(data.subarray(at, at + 65_537));
    expect(await h.digest()).toBe(createHash('sha256').update(data).digest('hex'));
  });
});
