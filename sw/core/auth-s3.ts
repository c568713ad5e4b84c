// Who is calling, in S3's dialect: AWS Signature Version 4 in the Authorization header or in a
// presigned URL's query (protocol/sigv4.ts), or nobody. What the signature says of the body (its
// SHA-256, or that it comes aws-chunked, its chunks signed or not) goes on to readBody (payload.ts).
// Errors are S3's: a signature that cannot be read is 400, one that does not match 403
// SignatureDoesNotMatch, whose document shows the canonical request and string to sign, as S3's does.
import { SvcError } from './errors.ts';
import { limits } from './limits.ts';
import { STREAMING_SIGNED, STREAMING_SIGNED_TRAILER, STREAMING_UNSIGNED, type Payload } from './payload.ts';
import {
  UNSIGNED_PAYLOAD, amzDateMs, canonicalRequest, parseAuthorization, parsePresigned, stringToSignV4, verifyV4, type SignedBy,
} from '../../protocol/sigv4.ts';
import type { AuthInput, Authenticated } from './auth.ts';

/** The longest a presigned URL may be valid: seven days, as S3 allows. */
const MAX_EXPIRES_SECONDS = 7 * 24 * 3600;

/** The access key an S3 signature claims, checked or not (for the log); undefined when none. */
export function s3AccessKeyId(headers: Headers, query: URLSearchParams): string | undefined {
  const header = headers.get('authorization');
  const credential = header?.trim().startsWith('AWS4-HMAC-SHA256 ')
    ? /Credential=([^/,\s]+)\//.exec(header)?.[1]
    : /^([^/]+)\//.exec(query.get('X-Amz-Credential') ?? '')?.[1];
  return credential || undefined;
}

/**
 * The host a signature must cover: the one the request is routed by (the URL's). A Host header
 * is taken as written when it names that host (a client may sign `host:80`), never when it names
 * another (an absolute-form target routes by its own host, whatever Host says).
 */
function routedHost(sent: string | null, url: URL): string {
  if (sent === null) return url.host;
  try {
    return new URL(`${url.protocol}//${sent}`).host === url.host ? sent : url.host;
  } catch {
    return url.host;
  }
}

const malformed = (presigned: boolean, message: string): never => {
  throw new SvcError(presigned ? 'AuthorizationQueryParametersError' : 'AuthorizationHeaderMalformed', message);
};

/** What `x-amz-content-sha256` says of the body. */
function payloadOf(hash: string, signed: SignedBy, secret: string): Payload {
  if (/^[0-9a-f]{64}$/.test(hash)) return { sha256: hash };
  if (hash === UNSIGNED_PAYLOAD) return {};
  if (hash === STREAMING_UNSIGNED) return { chunked: {} };
  if (hash === STREAMING_SIGNED || hash === STREAMING_SIGNED_TRAILER) {
    return {
      chunked: {
        signing: {
          secret, credential: signed.credential, amzDate: signed.amzDate, seedSignature: signed.signature,
          ...(hash === STREAMING_SIGNED_TRAILER ? { signedTrailer: true } : {}),
        },
      },
    };
  }
  throw new SvcError('InvalidArgument', 'x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER, '
    + `${STREAMING_SIGNED}, ${STREAMING_SIGNED_TRAILER} or the hex SHA-256 of the body.`);
}

export async function authenticateS3(i: AuthInput): Promise<Authenticated> {
  const header = i.headers.get('authorization');
  const presigned = header === null;
  let signed: SignedBy | 'malformed' | undefined;
  if (header !== null) {
    signed = parseAuthorization(header, i.headers.get('x-amz-date'));
    if (signed === undefined) {
      return malformed(false, 'The Authorization header must be "AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…" (AWS Signature Version 4).');
    }
    if (signed === 'malformed') {
      return malformed(false, 'The authorization header is malformed: it needs Credential={key}/{date}/{region}/s3/aws4_request, '
        + 'SignedHeaders and a 64-hex Signature, and the request an x-amz-date of the form 20260101T000000Z.');
    }
  } else {
    signed = parsePresigned(i.query);
    if (signed === undefined) return { caller: null };
    if (signed === 'malformed') {
      return malformed(true, 'A presigned URL needs X-Amz-Algorithm=AWS4-HMAC-SHA256, X-Amz-Credential, X-Amz-Date, X-Amz-Expires, X-Amz-SignedHeaders and a 64-hex X-Amz-Signature.');
    }
  }
  const { credential } = signed;
  if (credential.date !== signed.amzDate.slice(0, 8)) {
    malformed(presigned, `The credential's date ${credential.date} is not the day of the request's date ${signed.amzDate}.`);
  }
  if (credential.service !== 's3') {
    malformed(presigned, `The credential names the service "${credential.service}"; sign for "s3" (aws4fetch: { service: 's3' }).`);
  }
  if (!signed.signedHeaders.includes('host')) malformed(presigned, 'The signed headers must include host.');
  if (presigned && (signed.expires! < 1 || signed.expires! > MAX_EXPIRES_SECONDS)) {
    malformed(true, `X-Amz-Expires must be from 1 to ${MAX_EXPIRES_SECONDS} seconds (seven days).`);
  }
  // Whoever holds a signed request (an upload link above all) must not add to what it does: an
  // unsigned x-amz-copy-source would turn an upload into a copy of anything the signer may read.
  const unsigned = [...i.headers.keys()].filter((name) => name.startsWith('x-amz-') && !signed.signedHeaders.includes(name));
  if (unsigned.length > 0) {
    throw new SvcError('AccessDenied', `There were headers present in the request which were not signed: ${unsigned.join(', ')}. Sign every x-amz-* header sent.`, {}, {
      HeadersNotSigned: unsigned.join(', '),
    });
  }
  const hashHeader = i.headers.get('x-amz-content-sha256');
  if (!presigned && hashHeader === null) {
    throw new SvcError('InvalidRequest', 'Missing required header for this request: x-amz-content-sha256.');
  }
  const payloadHash = presigned ? (i.query.get('X-Amz-Content-Sha256') ?? hashHeader ?? UNSIGNED_PAYLOAD) : hashHeader!;

  const account = await i.store.getAccount(credential.accessKeyId);
  if (!account) {
    throw new SvcError('InvalidAccessKeyId', `The AWS Access Key Id "${credential.accessKeyId}" does not exist in this service's records.`);
  }
  const query = new URLSearchParams(i.url.search);
  let headers = i.headers;
  if (signed.signedHeaders.includes('content-length') && !headers.has('content-length') && i.withheldLength) {
    // A browser does not show a worker the Content-Length a page's SDK signed: the body's length is it.
    headers = new Headers(headers);
    headers.set('content-length', String(await i.withheldLength()));
  }
  const canonical = canonicalRequest({
    method: i.method,
    rawPath: i.url.pathname,
    query,
    headers,
    host: routedHost(headers.get('host'), i.url),
    signedHeaders: signed.signedHeaders,
    payloadHash,
    presigned,
  });
  const text = canonical === undefined ? undefined : await stringToSignV4(signed.amzDate, credential, canonical);
  // A header value beyond ASCII is bytes on the wire: signed as those bytes (boto3 sending UTF-8,
  // as S3 reads it), or as the UTF-8 of the characters Node sent one byte each (the AWS SDK for JavaScript).
  const asBytes = text !== undefined && /[\u0080-\u00ff]/.test(canonical!) && !/[^\u0000-\u00ff]/.test(canonical!)
    ? await stringToSignV4(signed.amzDate, credential, canonical!, 'bytes') : undefined;
  const matches = async (t: string | undefined) => t !== undefined && verifyV4(account.secret, credential, t, signed.signature);
  if (text === undefined || !((await matches(text)) || (await matches(asBytes)))) {
    throw new SvcError(
      'SignatureDoesNotMatch',
      'The request signature we calculated does not match the signature you provided. Check your key and signing method '
        + `(the secret of "${credential.accessKeyId}", and that the request is sent as it was signed: each signed header, the path, the query).`,
      {},
      {
        AWSAccessKeyId: credential.accessKeyId,
        ...(text !== undefined ? { StringToSign: text, CanonicalRequest: canonical! } : {}),
        SignatureProvided: signed.signature,
      },
    );
  }
  const when = amzDateMs(signed.amzDate);
  if (presigned) {
    if (i.now < when - limits.clockSkewMs) throw new SvcError('AccessDenied', 'Request is not valid yet.');
    if (i.now > when + signed.expires! * 1000) throw new SvcError('AccessDenied', 'Request has expired.');
  } else if (Math.abs(i.now - when) > limits.clockSkewMs) {
    throw new SvcError('RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.');
  }
  return { caller: account, payload: payloadOf(payloadHash, signed, account.secret) };
}
