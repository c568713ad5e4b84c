// The multipart rules, as steps: an upload belongs to the bucket it was started in (name and
// identity: it never continues into a later bucket of that name), a part lands only while its
// upload is in progress there, Complete checks the listed parts and makes the object from their
// bodies without copying a byte, Abort frees everything.
import { all, getRead, range, rangeRead, type Read } from '../engine/types.ts';
import { PARTS, UPLOADS, UPLOAD_KEYS } from '../schema.ts';
import { completedFrom } from '../parts.ts';
import type { BucketRecord, BucketRef, CompleteRefusal, ObjectRecord, PartRecord, QuotaRefusal, UploadRecord, WriteCondition } from '../types.ts';
import { bodyId, dropBodies, putBody, type PreparedBody } from './bodies.ts';
import { makeCurrent, type ObjectStep } from './objects.ts';
import { charge } from './usage.ts';

/** Whether `upload` is in progress in the bucket `bucket` names (the same name and identity). */
export const belongs = (upload: UploadRecord | undefined, bucket: BucketRef): upload is UploadRecord =>
  upload !== undefined && upload.bucket === bucket.name && upload.bucketId === bucket.id;

export function* start(s: ObjectStep, bucket: BucketRecord, upload: Omit<UploadRecord, 'bucket' | 'bucketId'>): Generator<Read, 'ok', unknown> {
  // Upload ids are random UUIDs made by the handler: a new one cannot meet an existing one.
  const record: UploadRecord = { ...upload, bucket: bucket.name, bucketId: bucket.id };
  s.w.put(UPLOADS, record);
  s.w.put(UPLOAD_KEYS, record);
  return 'ok';
}

/** Ends an upload: its parts' records go (their bodies are the caller's to keep or drop). */
function end(s: ObjectStep, upload: UploadRecord): void {
  s.w.deleteRange(PARTS, { prefix: [upload.uploadId] });
  s.w.delete(UPLOADS, [upload.uploadId]);
  s.w.delete(UPLOAD_KEYS, [upload.bucket, upload.key, upload.uploadId]);
}

/** Stores a part, replacing one with the same number, while its upload is in progress in `bucket`. */
export function* putPart(
  s: ObjectStep,
  bucket: BucketRecord,
  part: Omit<PartRecord, 'bodyId'>,
  body: PreparedBody,
): Generator<Read, 'ok' | 'noSuchUpload' | QuotaRefusal, unknown> {
  // Checked inside the step: a part racing Abort or Complete lands before it or not at all. The
  // part it replaces is read at the same time (unused when there is no upload).
  const [upload, old] = yield* all(getRead(UPLOADS, [part.uploadId]), getRead(PARTS, [part.uploadId, part.partNumber]));
  if (!belongs(upload, bucket)) return 'noSuchUpload';
  if (!(yield* charge(s, bucket, body.size - (old?.size ?? 0)))) return 'quotaExceeded';
  const id = bodyId(bucket.id, upload.key);
  putBody(s.w, id, body);
  s.w.put(PARTS, { ...part, bodyId: id });
  if (old) yield* dropBodies(s.w, [old.bodyId], s.pieces);
  return 'ok';
}

export function* complete(
  s: ObjectStep,
  bucket: BucketRecord,
  uploadId: string,
  list: { partNumber: number; etag: string }[],
  object: Omit<ObjectRecord, 'bucket' | 'chunks' | 'size' | 'versionId' | 'parts' | 'uploadId'>,
  minPartBytes: number,
  condition?: WriteCondition,
): Generator<Read, ObjectRecord | CompleteRefusal, unknown> {
  // While the upload exists its bucket cannot be deleted (deleteBucket refuses), so the upload's
  // parts all belong to this very bucket.
  const [upload, stored] = yield* all(getRead(UPLOADS, [uploadId]), rangeRead(PARTS, { prefix: [uploadId] }));
  if (!belongs(upload, bucket)) return { refused: 'noSuchUpload' };
  const parts = completedFrom(list, stored, minPartBytes);
  if ('refused' in parts) return parts;
  const made = yield* makeCurrent(s, bucket, { ...object, bucket: bucket.name, size: parts.size, chunks: parts.chunks, parts: parts.parts, uploadId }, 0, parts.freed, condition);
  if (made === 'quotaExceeded') throw new Error('completing never grows usage');
  if (typeof made !== 'object') return { refused: made };
  yield* dropBodies(s.w, parts.dropped.map((p) => p.bodyId), s.pieces);
  end(s, upload);
  return made;
}

export function* abort(s: ObjectStep, bucket: BucketRecord, uploadId: string): Generator<Read, 'ok' | 'noSuchUpload', unknown> {
  const [upload, parts] = yield* all(getRead(UPLOADS, [uploadId]), rangeRead(PARTS, { prefix: [uploadId] }));
  if (!belongs(upload, bucket)) return 'noSuchUpload';
  yield* charge(s, bucket, -parts.reduce((n, p) => n + p.size, 0));
  yield* dropBodies(s.w, parts.map((p) => p.bodyId), s.pieces);
  end(s, upload);
  return 'ok';
}

/** Parts with a number above `marker`, ascending, at most `max`, of an upload in progress in `bucket`. */
export function* listParts(bucket: BucketRef, uploadId: string, marker: number, max: number): Generator<Read, { parts: PartRecord[]; truncated: boolean } | 'noSuchUpload', unknown> {
  const [upload, parts] = yield* all(
    getRead(UPLOADS, [uploadId]),
    rangeRead(PARTS, { prefix: [uploadId], start: [uploadId, marker], startOpen: true }, { limit: max + 1 }),
  );
  if (!belongs(upload, bucket)) return 'noSuchUpload';
  return { parts: parts.slice(0, max), truncated: parts.length > max };
}

/** In-progress uploads ordered by key, then uploadId: after (keyMarker, uploadIdMarker), never before the prefix. */
export function* listUploads(
  bucket: string,
  o: { prefix: string; keyMarker: string; uploadIdMarker: string; maxUploads: number },
): Generator<Read, { uploads: UploadRecord[]; truncated: boolean }, unknown> {
  // After every upload of keyMarker when no uploadIdMarker is given: keyMarker + '\u0000' is the
  // least key after it, and '' the least uploadId.
  const fromMarker = o.keyMarker !== '' && o.keyMarker >= o.prefix;
  const start = !fromMarker ? [bucket, o.prefix, '']
    : o.uploadIdMarker ? [bucket, o.keyMarker, o.uploadIdMarker]
      : [bucket, `${o.keyMarker}\u0000`, ''];
  const found = yield* range(UPLOAD_KEYS, { prefix: [bucket], start, startOpen: fromMarker && o.uploadIdMarker !== '' }, { limit: o.maxUploads + 1 });
  // Sorted: the first key without the prefix is past every key with it.
  const cut = found.findIndex((u) => !u.key.startsWith(o.prefix));
  const kept = cut < 0 ? found : found.slice(0, cut);
  return { uploads: kept.slice(0, o.maxUploads), truncated: kept.length > o.maxUploads };
}
