// S3's flexible checksums (issue 24): `x-amz-checksum-{crc32,crc32c,sha1,sha256}` as base64 of the
// digest, computed as a body streams. Since 2025 the AWS SDKs send one with every upload by default
// (CRC32) and check the one a GET returns when asked (`x-amz-checksum-mode: ENABLED`). All four
// come from hash-wasm (WebAssembly, incremental, its hashers kept for the next body). Where
// WebAssembly is refused, the CRCs are table-driven here (WebCrypto has neither), and SHA-1 and
// SHA-256 come from WebCrypto, which has no incremental form, so those keep the bytes until the
// digest is asked for.
import { createCRC32, createSHA1, createSHA256 } from 'hash-wasm';
import { joinBytes } from './bytes.ts';

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
const POLYNOMIALS = { CRC32: 0xedb88320, CRC32C: 0x82f63b78 } as const;
let tables: Record<'CRC32' | 'CRC32C', Uint32Array> | undefined;

const base64 = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes));

/** A digest as raw bytes, incrementally. */
interface Digest {
  update(data: Uint8Array): void;
  bytes(): Promise<Uint8Array>;
}

/** The table-driven CRC, where WebAssembly is refused. */
function crcByTable(name: 'CRC32' | 'CRC32C'): Digest {
  tables ??= { CRC32: crcTable(POLYNOMIALS.CRC32), CRC32C: crcTable(POLYNOMIALS.CRC32C) };
  const table = tables[name];
  let c = 0xffffffff;
  return {
    update(data) {
      let v = c; // a local, not the closure's variable, in the loop: several times faster
      for (let i = 0; i < data.byteLength; i++) v = table[(v ^ data[i]!) & 0xff]! ^ (v >>> 8);
      c = v;
    },
    async bytes() {
      const v = (c ^ 0xffffffff) >>> 0;
      return new Uint8Array([v >>> 24, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff]);
    },
  };
}

function webCrypto(name: 'SHA-1' | 'SHA-256'): Digest {
  const parts: Uint8Array[] = [];
  return {
    update(data) {
      parts.push(data.slice());
    },
    async bytes() {
      return new Uint8Array(await crypto.subtle.digest(name, joinBytes(parts)));
    },
  };
}

let wasmRefused = false;

type Hasher = Awaited<ReturnType<typeof createSHA256>>;

/**
 * hash-wasm hashers whose digest has been taken, by algorithm, for the next body: making one
 * instantiates a WebAssembly module, which costs more than hashing a small body (as md5.ts found).
 */
const idle: Record<ChecksumAlgorithm, Hasher[]> = { CRC32: [], CRC32C: [], SHA1: [], SHA256: [] };
const IDLE_MAX = 8;

const makers: Record<ChecksumAlgorithm, () => Promise<Hasher>> = {
  CRC32: () => createCRC32(POLYNOMIALS.CRC32),
  CRC32C: () => createCRC32(POLYNOMIALS.CRC32C),
  SHA1: () => createSHA1(),
  SHA256: () => createSHA256(),
};

/** hash-wasm's hasher, awaited before the first byte so that bytes go straight into it; the fallbacks where WebAssembly is refused. */
async function digestOf(a: ChecksumAlgorithm, engine?: ChecksumEngine): Promise<Digest> {
  if (engine !== 'fallback' && !wasmRefused) {
    try {
      const h = idle[a].pop() ?? (await makers[a]());
      h.init();
      return {
        update: (data) => h.update(data),
        bytes: async () => {
          const out = h.digest('binary');
          if (idle[a].length < IDLE_MAX) idle[a].push(h);
          return out;
        },
      };
    } catch {
      wasmRefused = true;
    }
  }
  return a === 'CRC32' || a === 'CRC32C' ? crcByTable(a) : webCrypto(a === 'SHA1' ? 'SHA-1' : 'SHA-256');
}

/** Which code computes a checksum: hash-wasm, or what runs where WebAssembly is refused (for tests and benchmarks). */
export type ChecksumEngine = 'hash-wasm' | 'fallback';

export async function createChecksum(a: ChecksumAlgorithm, engine?: ChecksumEngine): Promise<Checksum> {
  const d = await digestOf(a, engine);
  return { update: (data) => d.update(data), digest: async () => base64(await d.bytes()) };
}

/** An incremental SHA-256 with a hex digest: the payload hash `x-amz-content-sha256` names. */
export async function createSha256(): Promise<{ update(data: Uint8Array): void; digest(): Promise<string> }> {
  const d = await digestOf('SHA256');
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
