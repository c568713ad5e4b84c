// Tar archives composed of Blobs: the header blocks come from modern-tar, the bodies are the Blobs
// themselves, so composing an archive copies no body byte (the browser streams it from wherever
// the Blobs live). Used by the worker's export and by the console's download of several objects.
import { createTarPacker, type TarHeader } from 'modern-tar';

/**
 * The header blocks modern-tar writes for an entry (a PAX record first for a long or non-ASCII
 * name). It emits them when the entry is added, before any byte of the body: an empty chunk
 * written as the body comes out right after them and marks where they end.
 */
export async function tarHeaderBlocks(header: TarHeader): Promise<Uint8Array<ArrayBuffer>[]> {
  const { readable, controller } = createTarPacker();
  const reader = readable.getReader();
  const end = new Uint8Array(0);
  void controller.add({ mode: 0o644, ...header }).getWriter().write(end).catch(() => {});
  const blocks: Uint8Array<ArrayBuffer>[] = [];
  for (;;) {
    const { value } = await reader.read();
    if (value === undefined || value === end) break;
    blocks.push(value as Uint8Array<ArrayBuffer>);
  }
  await reader.cancel();
  return blocks;
}

/** What tar adds after a body of `size` bytes: padding to a whole 512-byte block. */
export const tarPadding = (size: number): Uint8Array<ArrayBuffer> => new Uint8Array(-size & 511);

/** Two empty blocks end an archive. */
export const TAR_END = new Uint8Array(1024);

/** One file of an archive; `header.size` must be the Blob's size. */
export interface TarFile {
  header: TarHeader & { size: number };
  body: Blob;
}

/** The archive of `files`, in order, as one Blob. */
export async function tarOfBlobs(files: Iterable<TarFile> | AsyncIterable<TarFile>): Promise<Blob> {
  const parts: BlobPart[] = [];
  for await (const f of files) parts.push(...(await tarHeaderBlocks(f.header)), f.body, tarPadding(f.header.size));
  parts.push(TAR_END);
  return new Blob(parts, { type: 'application/x-tar' });
}
