// Archives from Node: export a service's data to a tar file, import one, seed an empty server.
// All of it through swbucket/client over HTTP, so it works against any running swbucket server;
// the file is streamed both ways (fs.openAsBlob reads it from disk as it is sent).
import { createReadStream, createWriteStream, openAsBlob } from 'node:fs';
import { link, lstat, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
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

/** Where an export would replace a file that exists, and was not told to (`force`). */
export class OutputExistsError extends Error {
  override readonly name = 'OutputExistsError';
}

/**
 * A file name the server suggested (Content-Disposition), reduced to a plain name in the working
 * folder: no folder part (`../x.tar`, `/etc/x`, `a\\b`), nothing but letters, digits and `._-`, no
 * leading dot, at most 200 characters, ending in `.tar`; one with nothing left is `swbucket.tar`.
 * The server is not trusted to choose where the CLI writes.
 */
export function safeFileName(suggested: string): string {
  const last = suggested.split(/[\\/]/).pop() ?? '';
  let name = last.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^[._]+/, '').slice(0, 200);
  if (!/[A-Za-z0-9]/.test(name)) name = 'swbucket';
  return name.endsWith('.tar') ? name : `${name}.tar`;
}

/**
 * Writes the archive to `file` (a name the server suggests goes through safeFileName first). The
 * bytes go to a new temporary file beside it, created exclusively (never through a link planted
 * there), moved into place when whole: a cut export never leaves a file that looks finished. An
 * existing `file` is replaced only with `force` (else OutputExistsError, before anything is read;
 * and the final move refuses to replace one that appeared meanwhile). Calls `progress` with the
 * bytes written so far.
 */
export async function exportToFile(
  c: Connection,
  file: string | ((suggested: string) => string),
  o: Omit<ExportOptions, 'signal'> = {},
  progress?: (written: number, expectedAbout: number) => void,
  write: { force?: boolean } = {},
): Promise<{ file: string; bytes: number; objects: number }> {
  // Checked before anything is read: a name given, before the request; one the server suggests, once it has.
  const refuseExisting = async (path: string) => {
    if (!write.force && (await lstat(path).catch(() => null)) !== null) throw new OutputExistsError(`${path} exists: pass --force to replace it`);
  };
  if (typeof file === 'string') await refuseExisting(file);
  const archive = await rootClient(c).exportArchive(o);
  const target = typeof file === 'string' ? file : file(safeFileName(archive.fileName));
  if (typeof file !== 'string') await refuseExisting(target).catch(async (e: unknown) => {
    await archive.body.cancel();
    throw e;
  });
  const partial = join(dirname(target), `.${basename(target)}.${crypto.randomUUID()}.partial`);
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
    // 'wx': O_CREAT | O_EXCL, which fails on anything already at the name, a symbolic link included.
    await archive.body.pipeThrough(counting).pipeTo(Writable.toWeb(createWriteStream(partial, { flags: 'wx' })));
    if (write.force) await rename(partial, target);
    else {
      // link() refuses an existing name: no file that appeared meanwhile is replaced.
      await link(partial, target).catch((e: NodeJS.ErrnoException) => {
        throw e.code === 'EEXIST' ? new OutputExistsError(`${target} exists: pass --force to replace it`) : e;
      });
      await rm(partial);
    }
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
