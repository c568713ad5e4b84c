// Fixtures: data an empty store starts with, so that a demo or a lesson opens with something in it.
// A seed runs only while the store holds nothing of anyone's (no bucket, no account but root): on
// the first start, and again after deleteAllData(); never over data the app's users made.
import type { Client } from '../client/types.ts';
import { isEmptyStore } from '../client/store-state.ts';
import { ROOT_CREDENTIALS } from '../../protocol/instance.ts';

/** An archive's URL (made by export), or a function that fills the store through a root client. */
export type Seed = string | URL | ((client: Client) => Promise<void>);

/** Why a seed failed, in words that say what to do; startService reports it as 'seed-failed'. */
export class SeedError extends Error {}

/** Fetches and imports the archive, or runs the function. True when it seeded. */
async function seedNow(client: Client, seed: Seed): Promise<boolean> {
  if (!(await isEmptyStore(client))) return false;
  if (typeof seed === 'function') {
    await seed(client);
    return true;
  }
  const url = new URL(seed, document.baseURI);
  let archive: Blob;
  try {
    const res = await fetch(url);
    if (!res.ok) throw new Error(`${res.status} ${res.statusText}`);
    // A Blob the browser keeps (on disk when large), not bytes in this page's heap.
    archive = await res.blob();
  } catch (e) {
    throw new SeedError(`The seed archive ${url.href} could not be fetched (${e instanceof Error ? e.message : e}). `
      + 'Put the file where that URL points (for Vite: in public/), or fix the `seed` option of startService.');
  }
  await client.importArchive(archive, { conflict: 'skip' });
  return true;
}

/**
 * Seeds the instance when its store is empty. Tabs starting at once take turns (Web Locks), so one
 * seeds and the others find the store filled. A failed import changes nothing (imports are all or
 * nothing), so the next start tries again.
 */
export async function seedIfEmpty(service: { endpoint: string; name: string }, seed: Seed): Promise<boolean> {
  const { createClient } = await import('../client/client.ts');
  const client = createClient({ endpoint: `http://${service.endpoint}`, ...ROOT_CREDENTIALS });
  const run = async () => {
    try {
      return await seedNow(client, seed);
    } catch (e) {
      if (e instanceof SeedError) throw e;
      throw new SeedError(`Seeding the empty store failed, so it stays empty: ${e instanceof Error ? e.message : e}`);
    }
  };
  if (typeof navigator.locks?.request !== 'function') return run();
  return navigator.locks.request(`swbucket-seed:${service.name}`, run);
}
