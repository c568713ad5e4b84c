// S3's flexible checksums (issue 24): `x-amz-checksum-{crc32,crc32c,sha1,sha256}` as base64 of the
// digest, computed as a body streams. Since 2025 the AWS SDKs send one with every upload by default
// (CRC32) and check the one a GET returns when asked (`x-amz-checksum-mode: ENABLED`). CRC-32 and
// CRC-32C are table-driven here (WebCrypto has neither); SHA-1 and SHA-256 come from hash-wasm,
// incremental, and where WebAssembly is refused from WebCrypto, which has no incremental form, so
// there those two keep the bytes until the digest is asked for.
import { createSHA1, createSHA256 } from 'hash-wasm';

export type ChecksumAlgorithm = 'CRC32' | 'CRC32C' | 'SHA1' | 'SHA256';

export const CHECKSUM_ALGORITHMS: readonly ChecksumAlgorithm[] = ['CRC32', 'CRC32C', 'SHA1', 'SHA256'];

/** The header that carries an algorithm's checksum. */
export const checksumHeader = (a: ChecksumAlgorithm): string => `x-amz-checksum-${a.toLowerCase()}`;

export interface Checksum {
  update(data: Uint8Array): void;
  /** Base64 of the digest, as the header carries it. */
  digest(): Promise<string>;
}

function crcTable(polynomial: number): Uint32Array {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? polynomial ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
}

// The reflected polynomials: CRC-32 (IEEE 802.3, zlib's) and CRC-32C (Castagnoli, iSCSI's).
const TABLES = { CRC32: crcTable(0xedb88320), CRC32C: crcTable(0x82f63b78) };

const base64 = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes));

function crc(table: Uint32Array): Checksum {
  let c = 0xffffffff;
  return {
    update(data) {
      for (let i = 0; i < data.byteLength; i++) c = table[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
    },
    async digest() {
      const v = (c ^ 0xffffffff) >>> 0;
      return base64(new Uint8Array([v >>> 24, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff]));
    },
  };
}

/** A digest as raw bytes, incrementally. */
interface Digest {
  update(data: Uint8Array): void;
  bytes(): Promise<Uint8Array>;
}

function webCrypto(name: 'SHA-1' | 'SHA-256'): Digest {
  const parts: Uint8Array[] = [];
  return {
    update(data) {
      parts.push(data.slice());
    },
    async bytes() {
      const all = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
      let at = 0;
      for (const p of parts) {
        all.set(p, at);
        at += p.byteLength;
      }
      return new Uint8Array(await crypto.subtle.digest(name, all));
    },
  };
}

let wasmRefused = false;

/**
 * hash-wasm's hasher, awaited before the first byte, so that bytes go straight into it (the
 * payload's SHA-256, of bodies of any size); WebCrypto's buffered form where WebAssembly is refused.
 */
async function digestOf(name: 'SHA-1' | 'SHA-256'): Promise<Digest> {
  if (!wasmRefused) {
    try {
      const h = await (name === 'SHA-1' ? createSHA1() : createSHA256());
      h.init();
      return { update: (data) => h.update(data), bytes: async () => h.digest('binary') };
    } catch {
      wasmRefused = true;
    }
  }
  return webCrypto(name);
}

export async function createChecksum(a: ChecksumAlgorithm): Promise<Checksum> {
  if (a === 'CRC32' || a === 'CRC32C') return crc(TABLES[a]);
  const d = await digestOf(a === 'SHA1' ? 'SHA-1' : 'SHA-256');
  return { update: (data) => d.update(data), digest: async () => base64(await d.bytes()) };
}

/** An incremental SHA-256 with a hex digest: the payload hash `x-amz-content-sha256` names. */
export async function createSha256(): Promise<{ update(data: Uint8Array): void; digest(): Promise<string> }> {
  const d = await digestOf('SHA-256');
  return {
    update: (data) => d.update(data),
    digest: async () => Array.from(await d.bytes(), (b) => b.toString(16).padStart(2, '0')).join(''),
  };
}

/** The algorithm a request names (`x-amz-sdk-checksum-algorithm`, `x-amz-checksum-algorithm`), if one of ours. */
export function checksumAlgorithmOf(name: string | null): ChecksumAlgorithm | undefined {
  const upper = name?.toUpperCase();
  return CHECKSUM_ALGORITHMS.find((a) => a === upper);
}
