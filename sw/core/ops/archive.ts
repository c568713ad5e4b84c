// Export and import (docs/protocol.md, "Archives"): GET /?export streams a tar archive of buckets,
// their objects (optionally every version) and optionally the accounts; POST /?import puts one
// back, every stored version with its own ETag, dates, headers and versionId. Root only: an
// archive can hold every account's secret. Neither holds the archive: an export is composed of the
// stored Blobs or streamed one object at a time, and an import stores each object as it arrives.
import { createTarDecoder, type ParsedTarEntry, type TarHeader } from 'modern-tar';
import { TAR_END, tarHeaderBlocks, tarOfBlobs, tarPadding } from '../../../protocol/tar.ts';
import { SvcError, fail } from '../errors.ts';
import { limits } from '../limits.ts';
import { requireCaller } from '../access.ts';
import { xmlResponse } from '../xml.ts';
import { parseContentMd5, requestBody } from '../body.ts';
import { contentDisposition } from '../http.ts';
import {
  ARCHIVE_FORMAT, ARCHIVE_VERSION, MANIFEST_NAME, fileNamer, malformed, readManifest,
  type ArchiveObject, type Manifest,
} from '../archive.ts';
import { createMd5 } from '../../../protocol/md5.ts';
import { VERSION } from '../../../protocol/version.ts';
import { asBlob, type BucketRecord, type BucketRef, type Conflict, type ObjectRecord, type Pieces, type Store } from '../../store/types.ts';
import { ImportRefused } from '../../store/rules/imports.ts';
import { asRunning, sweepHeld } from '../../store/holders.ts';
import { blobOf, isPieces } from '../../store/pieces.ts';
import type { Context } from '../context.ts';

function requireRoot(ctx: Context) {
  const caller = requireCaller(ctx);
  if (!caller.root) throw new SvcError('AccessDenied', 'Only the root account may export or import archives.');
  return caller;
}

const PAGE = 1000;

/** Every stored version in `bucket` (or only the current objects), by key, as listed. */
async function versionsOf(store: Store, bucket: BucketRef, all: boolean): Promise<{ object: ObjectRecord; current: boolean }[]> {
  const out: { object: ObjectRecord; current: boolean }[] = [];
  let marker = '';
  let versionIdMarker = '';
  for (;;) {
    if (all) {
      const page = await store.listObjectVersions(bucket, { prefix: '', marker, versionIdMarker, maxKeys: PAGE });
      if (page === 'noSuchBucket') return fail('NoSuchBucket', `The bucket "${bucket.name}" was deleted during the export.`);
      for (const v of page.versions) out.push({ object: v.object, current: v.isLatest });
      const last = page.versions.at(-1);
      if (!page.truncated || !last) return out;
      marker = last.object.key;
      versionIdMarker = String(last.object.versionId ?? 'null');
    } else {
      const page = await store.listObjects(bucket, { prefix: '', marker, delimiter: '', maxKeys: PAGE });
      if (page === 'noSuchBucket') return fail('NoSuchBucket', `The bucket "${bucket.name}" was deleted during the export.`);
      for (const e of page.entries) if (e.kind === 'object') out.push({ object: e.object, current: true });
      const last = page.entries.at(-1);
      if (!page.truncated || last?.kind !== 'object') return out;
      marker = last.object.key;
    }
  }
}

/**
 * The manifest of what the request asks for, read from the store as it is now. With `snapshot`,
 * each object's bytes are read at once too (Blob handles, not bytes), and the manifest records
 * what was read: an object deleted since its listing is left out, one replaced is described as
 * read, so the archive always agrees with itself.
 */
async function describe(ctx: Context, snapshot: boolean): Promise<{ manifest: Manifest; refs: Map<string, BucketRecord>; bodies: Map<string, Blob> }> {
  const wanted = ctx.query.getAll('bucket');
  const all = await ctx.store.listAllBuckets();
  for (const name of wanted) {
    if (!all.some((b) => b.name === name)) fail('NoSuchBucket', `The bucket "${name}" does not exist.`);
  }
  const chosen = wanted.length > 0 ? all.filter((b) => wanted.includes(b.name)) : all;
  const withVersions = ctx.query.has('versions');
  const name = fileNamer();
  const objects: ArchiveObject[] = [];
  const bodies = new Map<string, Blob>();
  for (const bucket of chosen) {
    for (const listed of await versionsOf(ctx.store, bucket, withVersions)) {
      let object = listed.object;
      let body: Blob | undefined;
      if (snapshot) {
        const found = await ctx.store.getObject(bucket, object.key, listed.current ? undefined : object.versionId);
        if (found === 'noSuchBucket') return fail('NoSuchBucket', `The bucket "${bucket.name}" was deleted during the export.`);
        if (!found) continue;
        object = found.object;
        body = await blobOf(found.body);
      }
      // The upload that made an object is this store's to answer a retried Complete with, not the archive's.
      const { chunks: _chunks, bucket: _bucket, key, uploadId: _uploadId, ...record } = object;
      const o = { bucket: bucket.name, key, current: listed.current, ...record };
      const file = name(o);
      objects.push({ ...o, file });
      if (body) bodies.set(file, body);
    }
  }
  const manifest: Manifest = {
    format: ARCHIVE_FORMAT,
    version: ARCHIVE_VERSION,
    created: new Date(ctx.now()).toISOString(),
    generator: `swbucket ${VERSION}`,
    ...(ctx.query.has('accounts')
      ? {
        accounts: (await ctx.store.listAccounts()).map((a) => ({
          accessKeyId: a.accessKeyId, secret: a.secret, displayName: a.displayName,
          ...(a.quotaBytes !== undefined ? { quotaBytes: a.quotaBytes } : {}),
        })),
      }
      : {}),
    buckets: chosen.map(({ id: _id, ...b }) => b),
    objects,
  };
  return { manifest, refs: new Map(chosen.map((b) => [b.name, b])), bodies };
}

/** The manifest as a person reads it: one line per account, bucket and stored version. */
function manifestText(m: Manifest): string {
  const lines = (items: unknown[]) => (items.length === 0 ? '[]' : `[\n${items.map((i) => `  ${JSON.stringify(i)}`).join(',\n')}\n ]`);
  const { accounts, buckets, objects, ...head } = m;
  const fields = Object.entries(head).map(([k, v]) => ` ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
  if (accounts) fields.push(` "accounts": ${lines(accounts)}`);
  fields.push(` "buckets": ${lines(buckets)}`, ` "objects": ${lines(objects)}`);
  return `{\n${fields.join(',\n')}\n}\n`;
}

/** `swbucket-20261122-230500.tar` */
const archiveName = (now: number) =>
  `swbucket-${new Date(now).toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-')}.tar`;

interface Entry {
  header: TarHeader & { size: number };
  body(): Promise<Blob | Pieces>;
}

/**
 * The archive as one Blob composed of the stored Blobs: no byte passes through this worker's heap,
 * and the browser streams it from disk. For stores whose Blobs are handles (IndexedDB).
 */
async function composed(entries: Entry[]): Promise<Blob> {
  return tarOfBlobs((async function* () {
    for (const e of entries) yield { header: e.header, body: await blobOf(await e.body()) };
  })());
}

/** The archive as a stream that reads one object at a time, as the reader pulls. For stores whose reads copy. */
function streamed(entries: Entry[]): ReadableStream<Uint8Array> {
  let next = 0;
  let body: ReadableStreamDefaultReader<Uint8Array> | null = null;
  let pad = new Uint8Array(0);
  return new ReadableStream<Uint8Array>({
    // Each call enqueues something: a pull that enqueues nothing is not called again.
    async pull(controller) {
      if (body) {
        const { done, value } = await body.read();
        if (!done) return controller.enqueue(value);
        body = null;
        if (pad.byteLength > 0) return controller.enqueue(pad);
      }
      const e = entries[next++];
      if (!e) {
        controller.enqueue(TAR_END);
        return controller.close();
      }
      for (const block of await tarHeaderBlocks(e.header)) controller.enqueue(block);
      body = (await e.body()).stream().getReader();
      pad = tarPadding(e.header.size);
    },
    cancel: () => body?.cancel(),
  }, { highWaterMark: 0 });
}

export async function exportArchive(ctx: Context): Promise<Response> {
  requireRoot(ctx);
  // Stores whose Blobs are handles give the archive as one composed Blob, read all at once; the
  // others stream it, reading one object at a time as the reader pulls.
  const compose = ctx.store.blobsAreHandles === true;
  const { manifest, refs, bodies } = await describe(ctx, compose);
  const json = new TextEncoder().encode(manifestText(manifest));
  const entries: Entry[] = [
    { header: { name: MANIFEST_NAME, size: json.byteLength, mtime: new Date(ctx.now()) }, body: async () => new Blob([json]) },
    ...manifest.objects.map((o): Entry => ({
      header: { name: o.file, size: o.size, mtime: new Date(o.lastModified) },
      async body() {
        const read = bodies.get(o.file);
        if (read) return read;
        const found = await ctx.store.getObject(refs.get(o.bucket)!, o.key, o.current ? undefined : o.versionId);
        // Described before it is read: a change since then would make the archive disagree with itself.
        if (found === 'noSuchBucket' || !found || found.object.etag !== o.etag || found.object.lastModified !== o.lastModified) {
          throw new Error(`"${o.key}" in ${o.bucket} changed during the export; export again.`);
        }
        return isPieces(found.body) ? found.body : asBlob(found.body);
      },
    })),
  ];
  const headers: Record<string, string> = {
    'content-type': 'application/x-tar',
    'content-disposition': contentDisposition('attachment', archiveName(ctx.now())),
    'cache-control': 'no-store',
    'x-svc-archive-objects': String(manifest.objects.length),
    'x-svc-archive-object-bytes': String(manifest.objects.reduce((n, o) => n + o.size, 0)),
  };
  if (compose) {
    const archive = await composed(entries);
    return new Response(archive, { status: 200, headers: { ...headers, 'content-length': String(archive.size) } });
  }
  // A failure after the first byte can only cut the archive short: the reader sees the stream
  // fail, and an import refuses a cut archive.
  return new Response(streamed(entries), { status: 200, headers });
}

// ---- import ----------------------------------------------------------------------------------

/** An entry's bytes as a Blob, checked against what the manifest says of them. */
async function readEntry(entry: ParsedTarEntry, o: ArchiveObject, counted: (n: number) => void): Promise<Blob> {
  if (entry.header.size !== o.size) {
    await entry.body.cancel();
    return malformed(`"${o.file}" has ${entry.header.size} bytes; the manifest says ${o.size}.`);
  }
  const md5 = await createMd5();
  // Gathered into Blobs a few MiB at a time, so the bytes leave the JS heap as they come
  // (a browser keeps large Blobs on disk).
  const blobs: Blob[] = [];
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const reader = entry.body.getReader();
  for (;;) {
    let next: ReadableStreamReadResult<Uint8Array>;
    try {
      next = await reader.read();
    } catch {
      return malformed(`The archive breaks off inside "${o.file}": it was cut short or is damaged.`);
    }
    const { done, value: chunk } = next;
    if (done) break;
    md5.update(chunk);
    counted(chunk.byteLength);
    pending.push(chunk);
    pendingBytes += chunk.byteLength;
    if (pendingBytes >= 8 * 1024 * 1024) {
      blobs.push(new Blob(pending as Uint8Array<ArrayBuffer>[]));
      pending = [];
      pendingBytes = 0;
    }
  }
  blobs.push(new Blob(pending as Uint8Array<ArrayBuffer>[]));
  const digest = md5.digest();
  // A plain ETag is the MD5 of the bytes; a multipart one is not, but x-svc-object-md5 is.
  const expected = o.etag.includes('-') ? o.objectMd5 : o.etag;
  if (expected !== undefined && digest !== expected) malformed(`The bytes of "${o.file}" do not match its ${o.etag.includes('-') ? 'x-svc-object-md5' : 'ETag'}.`);
  return blobs.length === 1 ? blobs[0]! : new Blob(blobs);
}

/** The manifest entry, read whole (it is metadata only) within its limit. */
async function readManifestEntry(entry: ParsedTarEntry | undefined): Promise<Manifest> {
  if (!entry || entry.header.name !== MANIFEST_NAME) {
    await entry?.body.cancel();
    return malformed(`A swbucket archive starts with ${MANIFEST_NAME}; this one does not. Was it made by swbucket's export?`);
  }
  if (entry.header.size > limits.archiveManifestBytes) {
    await entry.body.cancel();
    return malformed(`${MANIFEST_NAME} may not exceed ${limits.archiveManifestBytes} bytes.`);
  }
  let text: string;
  try {
    const bytes = await new Response(entry.body).arrayBuffer().catch(() => malformed(`The archive breaks off inside ${MANIFEST_NAME}.`));
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (e) {
    if (e instanceof SvcError) throw e;
    return malformed(`${MANIFEST_NAME} is not valid UTF-8.`);
  }
  return readManifest(text);
}

// ---- one unit of work: staged, then committed in one step (sw/store/rules/imports.ts) ----

/** Bodies are staged a few at a time: small ones share a step, a large one has its own. */
const STAGE_BATCH_BYTES = 4 * 1024 * 1024;
const STAGE_BATCH_COUNT = 256;

/** What an import refused for a conflict says to do, whether the clash is seen first or at the commit. */
const CONFLICT_ADVICE = 'choose conflict=skip or conflict=overwrite to import anyway';

function conflictOf(ctx: Context): Conflict {
  const value = ctx.query.get('conflict') ?? 'fail';
  if (value !== 'skip' && value !== 'overwrite' && value !== 'fail') {
    return fail('InvalidArgument', 'conflict must be skip, overwrite or fail.');
  }
  return value;
}

/** With conflict=fail: the first stored version the archive would replace, checked before any write. */
async function firstConflict(store: Store, manifest: Manifest): Promise<string | undefined> {
  for (const a of manifest.accounts ?? []) {
    const existing = await store.getAccount(a.accessKeyId);
    if (existing && !existing.root) return `the account "${a.accessKeyId}" exists`;
  }
  for (const o of manifest.objects) {
    const bucket = await store.getBucket(o.bucket);
    if (!bucket) continue;
    const found = await store.headObject(bucket, o.key, o.current ? undefined : o.versionId);
    if (found && found !== 'noSuchBucket') return `"${o.key}" exists in ${o.bucket}`;
  }
  return undefined;
}

export async function importArchive(ctx: Context): Promise<Response> {
  const caller = requireRoot(ctx);
  const conflict = conflictOf(ctx);
  const store = ctx.store;
  // Content-MD5 is signed: with it, a captured import request cannot be sent again with another archive.
  const expectedMd5 = parseContentMd5(ctx.req.headers.get('content-md5'));
  const { stream } = await requestBody(ctx.req);
  if (!stream) fail('MalformedArchive', 'The request has no body: send the archive (a tar file) as the body.');
  const whole = expectedMd5 === undefined ? undefined : await createMd5();
  const hashed = whole ? stream!.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, c) {
      whole.update(chunk);
      c.enqueue(chunk);
    },
  })) : stream!;
  const entries = hashed.pipeThrough(createTarDecoder({ strict: true }));
  const reader = entries.getReader();
  const next = async (): Promise<ParsedTarEntry | undefined> => {
    for (;;) {
      let r: ReadableStreamReadResult<ParsedTarEntry>;
      try {
        r = await reader.read();
      } catch (e) {
        return malformed(`The archive is not a readable tar file (${e instanceof Error ? e.message : String(e)}).`);
      }
      if (r.done) return undefined;
      // Folders a person's tar tool may add carry nothing.
      if (r.value.header.type === 'directory') continue;
      return r.value;
    }
  };
  let bytesIn = 0;
  const counted = (n: number) => {
    bytesIn += n;
    ctx.bytesIn = bytesIn;
  };
  await sweepHeld(store);
  const importId = `import-${crypto.randomUUID()}`;

  const tally = await asRunning(importId, async () => {
    try {
      const manifest = await readManifestEntry(await next());
      if (conflict === 'fail') {
        // Checked again by the commit; asked now so that a clash is refused before the upload.
        const clash = await firstConflict(store, manifest);
        if (clash) fail('ImportConflict', `${clash}; ${CONFLICT_ADVICE}.`);
      }
      // A body's id begins with its bucket's, so that it sorts beside its neighbours' (rules/bodies.ts).
      const bucketIds = new Map<string, string>();
      for (const b of manifest.buckets) bucketIds.set(b.name, (await store.getBucket(b.name))?.id ?? importId);
      const byFile = new Map(manifest.objects.map((o) => [o.file, o]));
      const staged = new Map<string, { id: string; size: number }>();
      let pending: { o: ArchiveObject; body: Blob }[] = [];
      let pendingBytes = 0;
      const flush = async () => {
        const batch = pending;
        pending = [];
        pendingBytes = 0;
        const ids = await store.stageImportBodies(importId, batch.map(({ o, body }) => ({ bucketId: bucketIds.get(o.bucket)!, key: o.key, body })));
        batch.forEach(({ o }, i) => staged.set(o.file, ids[i]!));
      };
      for (;;) {
        const entry = await next();
        if (!entry) break;
        const o = byFile.get(entry.header.name);
        if (!o) {
          await entry.body.cancel();
          return malformed(`The archive holds "${entry.header.name}", which its manifest does not list (or lists twice).`);
        }
        byFile.delete(entry.header.name);
        pending.push({ o, body: await readEntry(entry, o, counted) });
        pendingBytes += o.size;
        if (pendingBytes >= STAGE_BATCH_BYTES || pending.length >= STAGE_BATCH_COUNT) await flush();
      }
      const missing = byFile.values().next();
      if (!missing.done) malformed(`The archive ends before "${missing.value.file}", which its manifest lists: it was cut short.`);
      // The decoder has read the body to its end.
      if (whole && whole.digest() !== expectedMd5) fail('BadDigest', 'The Content-MD5 you specified did not match what was received.');
      if (pending.length > 0) await flush();
      return await store.commitImport({
        importId,
        conflict,
        importer: caller.accessKeyId,
        accounts: (manifest.accounts ?? []).map((a) => ({
          accessKeyId: a.accessKeyId, secret: a.secret, displayName: a.displayName,
          ...(a.quotaBytes !== undefined ? { quotaBytes: a.quotaBytes } : {}),
        })),
        buckets: manifest.buckets,
        objects: manifest.objects.map(({ current, file, ...object }) => ({ object, current, body: staged.get(file)! })),
      });
    } catch (e) {
      await reader.cancel().catch(() => {});
      // What it stored was never seen: deleting it leaves the store exactly as the import found it.
      await store.dropHeld(importId).catch(() => {}); // else the next sweep deletes it
      if (e instanceof ImportRefused) {
        const code = e.reason === 'quota' ? 'QuotaExceeded' : 'ImportConflict';
        const advice = e.reason === 'conflict' ? `; ${CONFLICT_ADVICE}` : '';
        throw new SvcError(code, `${e.message}${advice}. Nothing was imported.`);
      }
      if (e instanceof SvcError) throw new SvcError(e.code, `${e.message.replace(/\.?$/, '.')} Nothing was imported.`, e.headers);
      throw e;
    }
  });
  return xmlResponse({
    ImportResult: {
      AccountsCreated: tally.accountsCreated,
      AccountsUpdated: tally.accountsUpdated,
      AccountsSkipped: tally.accountsSkipped,
      BucketsCreated: tally.bucketsCreated,
      BucketsExisting: tally.bucketsExisting,
      ObjectsRestored: tally.objectsRestored,
      ObjectsSkipped: tally.objectsSkipped,
      BytesRestored: tally.bytesRestored,
    },
  });
}
