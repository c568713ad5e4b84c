// Archives from Node: export a service's data to a tar file, import one, seed an empty server.
// All of it through swbucket/client over HTTP, so it works against any running swbucket server;
// the file is streamed both ways (fs.openAsBlob reads it from disk as it is sent).
import { createReadStream, createWriteStream, openAsBlob } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { createClient } from '../src/client/client.ts';
import { isEmptyStore } from '../src/client/store-state.ts';
import { ROOT_CREDENTIALS } from '../protocol/instance.ts';
import type { Client, ExportOptions, ImportOptions, ImportResult } from '../src/client/types.ts';

export interface Connection {
  /** e.g. http://127.0.0.1:9000 */
  endpoint: string;
  /** Default: the root account, svcadmin / svcadmin-secret. */
  accessKeyId?: string;
  secretAccessKey?: string;
}

export function rootClient(c: Connection): Client {
  return createClient({
    endpoint: c.endpoint,
    accessKeyId: c.accessKeyId ?? ROOT_CREDENTIALS.accessKeyId,
    secretAccessKey: c.secretAccessKey ?? ROOT_CREDENTIALS.secretAccessKey,
    pathStyle: true,
  });
}

/**
 * Writes the archive to `file` (a temporary name first, renamed when whole: a cut export never
 * leaves a file that looks finished). Calls `progress` with the bytes written so far.
 */
export async function exportToFile(
  c: Connection,
  file: string | ((suggested: string) => string),
  o: Omit<ExportOptions, 'signal'> = {},
  progress?: (written: number, expectedAbout: number) => void,
): Promise<{ file: string; bytes: number; objects: number }> {
  const archive = await rootClient(c).exportArchive(o);
  const target = typeof file === 'string' ? file : file(archive.fileName);
  const partial = `${target}.partial`;
  let bytes = 0;
  const expected = archive.objectBytes + 512 * (archive.objects + 3);
  const counting = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      bytes += chunk.byteLength;
      progress?.(bytes, expected);
      controller.enqueue(chunk);
    },
  });
  try {
    await archive.body.pipeThrough(counting).pipeTo(Writable.toWeb(createWriteStream(partial)));
    await rename(partial, target);
  } catch (e) {
    await rm(partial, { force: true });
    throw e;
  }
  return { file: target, bytes, objects: archive.objects };
}

export async function importFromFile(c: Connection, file: string, o: Omit<ImportOptions, 'signal'> = {}): Promise<ImportResult> {
  return rootClient(c).importArchive(await archiveBlob(file), o);
}

/**
 * The archive at `file` as a Blob: a regular file read as it is sent; a pipe or a device
 * (`/dev/stdin`, `-` for standard input) read whole first, since it has no size to give and
 * openAsBlob would see it as empty.
 */
async function archiveBlob(file: string): Promise<Blob> {
  if (file !== '-' && (await stat(file)).isFile()) return openAsBlob(file);
  const chunks: Uint8Array[] = [];
  for await (const chunk of file === '-' ? process.stdin : createReadStream(file)) chunks.push(chunk as Uint8Array);
  return new Blob(chunks as BlobPart[]);
}

/**
 * Imports `file` when the service holds nothing yet (no bucket, no account but root), as a
 * fixture: a server with data of its own is never seeded. Resolves to what was imported, or null.
 */
export async function seedIfEmpty(c: Connection, file: string): Promise<ImportResult | null> {
  const client = rootClient(c);
  if (!(await isEmptyStore(client))) return null;
  return client.importArchive(await archiveBlob(file), { conflict: 'skip' });
}
