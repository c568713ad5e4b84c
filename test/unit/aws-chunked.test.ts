// protocol/aws-chunked.ts: AWS's published example of a signed chunked upload (Amazon S3 API
// reference, "Signature Calculations for the Authorization Header: Transferring Payload in Multiple
// Chunks": 65 KiB of 'a' in a 64 KiB and a 1 KiB chunk) verifies, through the request's seed
// signature computed by protocol/sigv4.ts; any change to a chunk, a signature or the order is
// refused; the unsigned form with a checksum trailer (what the AWS SDK for JavaScript sends from
// Node) decodes; broken framings are refused, never passed on as bytes. Fed in every slicing.
import { describe, it, expect } from 'vitest';
import { decodeAwsChunked, ChunkedBodyError, type ChunkSigning } from '../../protocol/aws-chunked.ts';
import { canonicalRequest, parseAuthorization, stringToSignV4, verifyV4, type SignedBy } from '../../protocol/sigv4.ts';
import { joinBytes } from '../../protocol/bytes.ts';

const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const SEED = '4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9';
const SIGNATURES = [
  'ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648',
  '0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497',
  'b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9',
];
const HEADERS = new Headers({
  host: 's3.amazonaws.com',
  'x-amz-date': '20130524T000000Z',
  'x-amz-storage-class': 'REDUCED_REDUNDANCY',
  authorization: `AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class,Signature=${SEED}`,
  'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
  'content-encoding': 'aws-chunked',
  'x-amz-decoded-content-length': '66560',
  'content-length': '66824',
});

const te = new TextEncoder();
const cat = (...parts: (string | Uint8Array)[]) => joinBytes(parts.map((p) => (typeof p === 'string' ? te.encode(p) : p)));
const a = (n: number) => new Uint8Array(n).fill(0x61);

function awsExample(o: { signatures?: string[]; first?: Uint8Array } = {}): Uint8Array {
  const s = o.signatures ?? SIGNATURES;
  return cat(`10000;chunk-signature=${s[0]}\r\n`, o.first ?? a(65536), `\r\n400;chunk-signature=${s[1]}\r\n`, a(1024), `\r\n0;chunk-signature=${s[2]}\r\n\r\n`);
}

/** The body as a stream of pieces of `piece` bytes. */
function streamOf(bytes: Uint8Array, piece: number): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.byteLength) return c.close();
      c.enqueue(bytes.slice(at, at + piece));
      at += piece;
    },
  });
}

async function decode(bytes: Uint8Array, piece: number, signing?: ChunkSigning) {
  const { stream, trailers } = decodeAwsChunked(streamOf(bytes, piece), signing);
  const out = new Uint8Array(await new Response(stream).arrayBuffer());
  return { out, trailers: await trailers };
}

async function refusal(bytes: Uint8Array, piece: number, signing?: ChunkSigning): Promise<string> {
  try {
    await decode(bytes, piece, signing);
  } catch (e) {
    if (e instanceof ChunkedBodyError) return e.code;
    throw e;
  }
  return 'accepted';
}

describe("AWS's signed chunked upload example", () => {
  const by = parseAuthorization(HEADERS.get('authorization')!, HEADERS.get('x-amz-date')) as SignedBy;
  const signing: ChunkSigning = { secret: SECRET, credential: by.credential, amzDate: by.amzDate, seedSignature: by.signature };

  it('the seed signature is the request signature as protocol/sigv4.ts computes it', async () => {
    const canonical = canonicalRequest({
      method: 'PUT', rawPath: '/examplebucket/chunkObject.txt', query: new URLSearchParams(), headers: HEADERS, host: 's3.amazonaws.com',
      signedHeaders: by.signedHeaders, payloadHash: HEADERS.get('x-amz-content-sha256')!,
    })!;
    expect(await verifyV4(SECRET, by.credential, await stringToSignV4(by.amzDate, by.credential, canonical), by.signature)).toBe(true);
  });

  it('decodes and verifies chunk by chunk, however the body arrives', async () => {
    for (const piece of [1, 7, 512, 65536, 100_000]) {
      const { out, trailers } = await decode(awsExample(), piece, signing);
      expect(out.byteLength, `pieces of ${piece}`).toBe(66560);
      expect(out.every((b) => b === 0x61)).toBe(true);
      expect([...trailers]).toEqual([]);
    }
  });

  it('refuses a changed byte, a changed or missing signature, and chunks out of order', async () => {
    const changed = a(65536);
    changed[100] = 0x62;
    expect(await refusal(awsExample({ first: changed }), 4096, signing)).toBe('SignatureDoesNotMatch');
    expect(await refusal(awsExample({ signatures: [SIGNATURES[0]!, SIGNATURES[0]!, SIGNATURES[2]!] }), 4096, signing)).toBe('SignatureDoesNotMatch');
    expect(await refusal(awsExample({ signatures: [SIGNATURES[1]!, SIGNATURES[0]!, SIGNATURES[2]!] }), 4096, signing)).toBe('SignatureDoesNotMatch');
    const unsignedFinal = cat(`10000;chunk-signature=${SIGNATURES[0]}\r\n`, a(65536), `\r\n400;chunk-signature=${SIGNATURES[1]}\r\n`, a(1024), '\r\n0\r\n\r\n');
    expect(await refusal(unsignedFinal, 4096, signing)).toBe('SignatureDoesNotMatch');
    // Signed with another seed (another request's signature): the chain does not start.
    expect(await refusal(awsExample(), 4096, { ...signing, seedSignature: SIGNATURES[0]! })).toBe('SignatureDoesNotMatch');
  });
});

describe('unsigned aws-chunked with a checksum trailer (STREAMING-UNSIGNED-PAYLOAD-TRAILER)', () => {
  const body = cat('5\r\nhello\r\n6\r\n world\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\n\r\n');

  it('decodes the bytes and hands over the trailers, however the body arrives', async () => {
    for (const piece of [1, 3, 1000]) {
      const { out, trailers } = await decode(body, piece);
      expect(new TextDecoder().decode(out)).toBe('hello world');
      expect(trailers.get('x-amz-checksum-crc32')).toBe('DUoRhQ==');
    }
  });

  it('refuses framings that are broken, cut short, too long or go on after the end', async () => {
    const cases: [string, string][] = [
      ['5\r\nhello\r\n', 'IncompleteBody'], // no final chunk
      ['5\r\nhel', 'IncompleteBody'],
      ['5\r\nhello world\r\n0\r\n\r\n', 'InvalidRequest'], // longer than its size
      ['zz\r\nhello\r\n0\r\n\r\n', 'InvalidRequest'],
      ['-5\r\nhello\r\n0\r\n\r\n', 'InvalidRequest'],
      ['fffffffff\r\n', 'InvalidRequest'], // more hex digits than any size
      ['2000000\r\n', 'InvalidRequest'], // 32 MiB: over the largest chunk
      ['0\r\n\r\nextra', 'InvalidRequest'],
      ['0\r\nnot a trailer\r\n\r\n', 'InvalidRequest'],
      [`${'1'.repeat(5000)}`, 'InvalidRequest'], // a line with no end
    ];
    for (const [text, code] of cases) expect(await refusal(te.encode(text), 2), JSON.stringify(text)).toBe(code);
  });
});
