// What a request names (docs/protocol.md, "Addressing"): the service, a bucket, or an object.
// Shared by the service, which resolves URLs to targets, and the client, which signs them.

export type Target =
  | { kind: 'service'; bucket: ''; key: '' }
  | { kind: 'bucket'; bucket: string; key: '' }
  | { kind: 'object'; bucket: string; key: string };

/** 3–63 characters of a-z 0-9 -, starting and ending with a letter or digit. */
const BUCKET_NAME = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

export const isValidBucketName = (name: string): boolean => BUCKET_NAME.test(name);

/** Why `name` is not a bucket name, in words (for the service's message and the client's). */
export function bucketNameProblem(name: string): string {
  const rule = 'bucket names are 3–63 characters of a-z, 0-9 and -, starting and ending with a letter or digit';
  const lower = name.toLowerCase();
  const upper = /[A-Z]/.test(name) ? ` (upper-case letters are not allowed: a host name does not keep them${isValidBucketName(lower) ? `; try "${lower}"` : ''})` : '';
  return `The bucket name "${name}" is not valid: ${rule}${upper}.`;
}

export function targetOf(bucket: string, key: string): Target {
  if (bucket === '') return { kind: 'service', bucket: '', key: '' };
  return key === '' ? { kind: 'bucket', bucket, key: '' } : { kind: 'object', bucket, key };
}
