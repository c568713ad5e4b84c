// upload(): one PUT below the part size, a multipart upload above it, with parts sent in
// parallel (bounded), each retried with backoff, abortable, reporting progress, and resumable.
import { SvcClientError } from './errors.ts';
import { md5Hex } from './hashing.ts';
import type { Client, UploadOptions, UploadResult } from './types.ts';

const MiB = 1024 * 1024;
/** The service refuses parts under 16 KiB except the last one. */
const MIN_PART = 16 * 1024;

function aborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason ?? new DOMException('The upload was aborted.', 'AbortError');
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason ?? new DOMException('The upload was aborted.', 'AbortError'));
    }, { once: true });
  });
}

/** Network failures and the service's own trouble are worth another try; a refusal is not. */
const retryable = (e: unknown) => e instanceof TypeError || (e instanceof SvcClientError && e.status >= 500);

async function withRetries<T>(attempt: () => Promise<T>, retries: number, signal?: AbortSignal): Promise<T> {
  for (let n = 0; ; n++) {
    aborted(signal);
    try {
      return await attempt();
    } catch (e) {
      if (signal?.aborted || n >= retries || !retryable(e)) throw e;
      await sleep(200 * 2 ** n + Math.random() * 100, signal);
    }
  }
}

export async function upload(client: Client, bucket: string, key: string, body: Blob, o: UploadOptions = {}): Promise<UploadResult> {
  const partSize = Math.max(o.partSize ?? 8 * MiB, MIN_PART);
  const concurrency = Math.max(1, o.concurrency ?? 4);
  const retries = o.retries ?? 3;
  const total = body.size;
  let loaded = 0;
  const progress = (bytes: number) => {
    loaded += bytes;
    o.onProgress?.({ loaded, total });
  };
  aborted(o.signal);

  if (total <= partSize) {
    const put = await withRetries(() => client.putObject(bucket, key, body, { ...o, ...(o.signal ? { signal: o.signal } : {}) }), retries, o.signal);
    progress(total);
    return { etag: put.etag, ...(put.versionId !== undefined ? { versionId: put.versionId } : {}), partsSent: 0, partsSkipped: 0 };
  }

  let uploadId: string | undefined;
  const existing = new Map<number, { size: number; etag: string }>();
  if (o.resume) {
    let newest: { uploadId: string; initiated: Date } | undefined;
    for await (const u of client.listAllMultipartUploads(bucket, { prefix: key })) {
      if (u.key === key && (!newest || u.initiated >= newest.initiated)) newest = u;
    }
    if (newest) {
      uploadId = newest.uploadId;
      for await (const p of client.listAllParts(bucket, key, uploadId)) existing.set(p.partNumber, { size: p.size, etag: p.etag });
    }
  }
  // The object's type is given when the upload starts; a File's own type stands in for a missing one, as it does for a single PUT.
  uploadId ??= await client.createMultipartUpload(bucket, key, o.contentType === undefined && body.type ? { ...o, contentType: body.type } : o);
  const id = uploadId;

  const count = Math.ceil(total / partSize);
  const etags: string[] = new Array(count);
  let next = 0;
  let sent = 0;
  let skipped = 0;
  o.onProgress?.({ loaded: 0, total });

  async function worker(): Promise<void> {
    while (next < count) {
      const index = next++;
      const part = body.slice(index * partSize, Math.min(total, (index + 1) * partSize));
      const partNumber = index + 1;
      const md5 = await md5Hex(part);
      aborted(o.signal);
      const have = existing.get(partNumber);
      if (have && have.size === part.size && have.etag === md5) {
        etags[index] = md5;
        skipped++;
      } else {
        etags[index] = (await withRetries(
          () => client.uploadPart(bucket, key, id, partNumber, part, { md5Hex: md5, ...(o.signal ? { signal: o.signal } : {}) }),
          retries, o.signal,
        )).etag;
        sent++;
      }
      progress(part.size);
    }
  }

  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
    aborted(o.signal);
    const done = await withRetries(
      () => client.completeMultipartUpload(bucket, key, id, etags.map((etag, i) => ({ partNumber: i + 1, etag })), { ...(o.metadata ? { metadata: o.metadata } : {}) }),
      retries, o.signal,
    );
    return { etag: done.etag, ...(done.versionId !== undefined ? { versionId: done.versionId } : {}), uploadId: id, partsSent: sent, partsSkipped: skipped };
  } catch (e) {
    // Cancelled: by default nothing is left on the service. Failed otherwise: the upload stays,
    // so a later call with `resume` sends only what is missing.
    if (o.signal?.aborted && o.abortOnCancel !== false) await client.abortMultipartUpload(bucket, key, id).catch(() => {});
    throw e;
  }
}
