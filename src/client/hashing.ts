// MD5 for Content-MD5 and part checks, in a dedicated worker created on first use and reused, so
// hashing a large file never blocks the page. Where no worker can run (Node, a Content-Security-
// Policy that refuses blob: workers, a worker that dies), hash on this thread instead: never hang.
type Hash = (blob: Blob) => Promise<string>;

/** What hash-worker.ts posts once its script runs. */
export const HASH_WORKER_READY = 'swbucket:hash-worker-ready';
const STARTUP_MS = 10_000;

// Loaded only when needed, so an app's main bundle carries no MD5 engine.
const inPlace: Hash = async (blob) => (await import('../../protocol/md5.ts')).md5OfBlob(blob);

async function startWorker(): Promise<Hash> {
  if (typeof Worker === 'undefined' || typeof URL.createObjectURL !== 'function') return inPlace;
  const source = (await import('./hash-worker-source.ts')).default;
  if (!source) return inPlace;
  let worker: Worker;
  const url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
  try {
    worker = new Worker(url);
  } catch {
    URL.revokeObjectURL(url);
    return inPlace;
  }
  let failed: (reason: unknown) => void = () => {};
  const failure = new Promise<never>((_, reject) => (failed = reject));
  failure.catch(() => {});
  worker.addEventListener('error', (e) => failed(e), { once: true });
  const started = await Promise.race([
    new Promise<boolean>((resolve) => worker.addEventListener('message', (e) => resolve(e.data === HASH_WORKER_READY), { once: true })),
    failure.then(() => false, () => false),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), STARTUP_MS)),
  ]);
  URL.revokeObjectURL(url);
  if (!started) {
    worker.terminate();
    return inPlace;
  }
  const remote = (await import('comlink')).wrap<{ md5: Hash }>(worker);
  let broken = false;
  failure.catch(() => (broken = true));
  // A worker that fails later rejects the calls in flight instead of leaving them waiting.
  return (blob) => (broken ? inPlace(blob) : Promise.race([remote.md5(blob), failure]).catch(() => inPlace(blob)));
}

let hasher: Promise<Hash> | null = null;

export async function md5Hex(blob: Blob): Promise<string> {
  hasher ??= startWorker();
  return (await hasher)(blob);
}
