// The layout of a --data directory, and the upgrade of one an earlier version wrote. A directory
// records its layout in the `meta` table; one written by a later layout is refused rather than
// misread.
//
// Layout 1 (before the store was written over engines) differs from layout 2 in three tables:
// - `bodies` held each body as one raw value. Layout 2 keeps a body's record there ({ id, bytes }
//   when small, else { id, pieces, pieceBytes, size }) and larger bodies as pieces in `pieces`, so
//   that a range reads only the pieces it covers and a GET streams with bounded memory;
// - `upload-keys` held an uploadId under [bucket, key, uploadId]; layout 2 the upload's record;
// - `usage-exact` did not exist (every figure was exact): every account gets its marker.
// Bodies are converted a batch per transaction, the last converted id kept in `meta` with them, so
// an upgrade stopped half-way (a killed process) goes on where it stopped.
import type { Database, RootDatabase } from 'lmdb';
import { BODY_SIZES } from '../sw/store/rules/bodies.ts';
import type { Account, UploadRecord } from '../sw/store/types.ts';
import type { BodyRecord } from '../sw/store/schema.ts';
import { after, stringOf, tupleKey } from './lmdb-keys.ts';

/** The layout this version writes. */
export const LAYOUT = 2;

/** Where a store cannot open: the directory is not usable, or another server holds it. */
export class DataDirError extends Error {
  override readonly name = 'DataDirError';
}

/** Body bytes converted per transaction of the upgrade. */
const BATCH_BYTES = 64 * 1024 * 1024;

type Raw = Database<Buffer, Buffer>;

/**
 * Brings the directory's layout to LAYOUT: marks it when new (its first records are the store's
 * own: rules/store.ts NEW_STORE), upgrades an earlier one. Says which it did.
 */
export async function upgradeLayout(env: RootDatabase, dir: string): Promise<{ created: boolean; upgradedFrom?: number }> {
  const meta = env.openDB<unknown, string>('meta', {});
  const table = <V>(name: string) => env.openDB<V, Buffer>(name, { keyEncoding: 'binary' });
  const accounts = table<Account>('accounts');
  const markers = table<{ accessKeyId: string }>('usage-exact');
  const layout = meta.get('schema') as number | undefined;
  if (layout !== undefined && layout > LAYOUT) {
    throw new DataDirError(`${dir} holds data of a later swbucket (layout ${layout}; this one reads ${LAYOUT})`);
  }
  if (layout === LAYOUT) return { created: false };
  if (layout === undefined) {
    await env.childTransaction(() => {
      if (meta.get('schema') === undefined) meta.put('schema', LAYOUT);
    });
    return { created: true };
  }

  // Layout 1. The bodies, a batch per transaction.
  const raw: Raw = env.openDB<Buffer, Buffer>('bodies', { keyEncoding: 'binary', encoding: 'binary' });
  const records = table<BodyRecord>('bodies');
  const pieces: Raw = env.openDB<Buffer, Buffer>('pieces', { keyEncoding: 'binary', encoding: 'binary' });
  for (;;) {
    const more = await env.childTransaction(() => {
      const from = meta.get('upgrade-bodies-after') as Buffer | undefined;
      // The batch's keys first: the table is rewritten below, not under a cursor walking it.
      const batch: Buffer[] = [];
      let bytes = 0;
      for (const key of raw.getKeys(from ? { start: after(from) } : {})) {
        if (bytes >= BATCH_BYTES) break;
        batch.push(Buffer.from(key));
        bytes += raw.getBinaryFast(key)?.length ?? 0;
      }
      for (const key of batch) {
        const value = raw.getBinary(key)!;
        const id = stringOf(key);
        if (value.length <= BODY_SIZES.inlineMaxBytes) {
          records.put(key, { id, bytes: new Uint8Array(value) });
          continue;
        }
        const pieceBytes = BODY_SIZES.pieceBytes;
        const n = Math.ceil(value.length / pieceBytes);
        for (let i = 0; i < n; i++) pieces.put(tupleKey([id, i]), value.subarray(i * pieceBytes, (i + 1) * pieceBytes));
        records.put(key, { id, pieces: n, pieceBytes, size: value.length });
      }
      const last = batch[batch.length - 1];
      if (last) meta.put('upgrade-bodies-after', last);
      return last !== undefined;
    });
    if (!more) break;
  }

  // The rest in one transaction, with the new layout.
  await env.childTransaction(() => {
    for (const { key, value } of accounts.getRange({})) markers.put(key, { accessKeyId: value.accessKeyId });
    const uploads = table<UploadRecord>('uploads');
    const uploadKeys = env.openDB<unknown, Buffer>('upload-keys', { keyEncoding: 'binary' });
    for (const { key, value } of uploadKeys.getRange({})) {
      if (typeof value !== 'string') continue; // converted already
      const upload = uploads.get(tupleKey([value]));
      if (upload) uploadKeys.put(key, upload);
      else uploadKeys.remove(key);
    }
    meta.remove('upgrade-bodies-after');
    meta.put('schema', LAYOUT);
  });
  return { created: false, upgradedFrom: layout };
}
