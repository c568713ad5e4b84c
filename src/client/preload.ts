// The parts of the client that load on first use (the XML parser, MD5, the hashing worker), loaded
// now: startService() calls this once the worker controls the page, so they come through the worker,
// which keeps them (sw/shell.ts). An app that goes offline before its first upload still has them.
export async function preloadClient(): Promise<void> {
  await Promise.all([import('./xml.ts'), import('../../protocol/md5.ts'), import('./hash-worker-source.ts'), import('comlink')]);
}
