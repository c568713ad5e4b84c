// A store's contents as its reads answer them — every version with its bytes' SHA-256, uploads in
// progress and their parts, accounts with their usage — in one plain value, to compare two stores
// (or a store before and after an upgrade) without depending on how either keeps its records.
import { createHash } from 'node:crypto';
import type { Store } from '../../sw/store/types.ts';

/** What the store holds, as reads answer it: every version with its bytes' SHA-256, uploads, parts, accounts. */
export async function described(store: Store): Promise<unknown> {
  const out: Record<string, unknown> = { accounts: (await store.listAccounts()).map(({ accessKeyId, usedBytes, quotaBytes }) => ({ accessKeyId, usedBytes, quotaBytes })) };
  for (const b of await store.listAllBuckets()) {
    const ref = { name: b.name, id: b.id };
    const listed = await store.listObjectVersions(ref, { prefix: '', marker: '', versionIdMarker: '', maxKeys: 1000 });
    if (listed === 'noSuchBucket') throw new Error('gone');
    const versions = [];
    for (const v of listed.versions) {
      const got = await store.getObject(ref, v.object.key, v.object.versionId);
      if (!got || got === 'noSuchBucket') throw new Error('unreadable');
      const bytes = new Uint8Array(await new Response(got.body instanceof Uint8Array || got.body instanceof Blob ? got.body : got.body.stream()).arrayBuffer());
      const { chunks: _, bucket: __, ...record } = v.object;
      versions.push({ ...record, isLatest: v.isLatest, sha256: createHash('sha256').update(bytes).digest('hex') });
    }
    const uploads = await store.listMultipartUploads(ref, { prefix: '', keyMarker: '', uploadIdMarker: '', maxUploads: 1000 });
    if (uploads === 'noSuchBucket') throw new Error('gone');
    const parts = [];
    for (const u of uploads.uploads) {
      const p = await store.listParts(ref, u.uploadId, 0, 1000);
      if (typeof p === 'string') throw new Error('gone');
      parts.push(...p.parts.map(({ bodyId: _, ...part }) => part));
    }
    out[b.name] = { bucket: { ...b, id: undefined }, versions, uploads: uploads.uploads.map(({ bucketId: _, ...u }) => u), parts };
  }
  return out;
}

