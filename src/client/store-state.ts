// Whether a store holds anything of anyone's: the rule that decides whether a seed (a fixture)
// may fill it, in the browser (startService) and for the server (swbucket serve --seed).
import type { Client } from './types.ts';

/**
 * True when the store has no bucket and no account but root. Asked as root: a root secret that no
 * longer works means someone has administered this store, so it is not new.
 */
export async function isEmptyStore(root: Client): Promise<boolean> {
  try {
    const [{ buckets }, accounts] = await Promise.all([root.listBuckets(), root.listAccounts()]);
    return buckets.length === 0 && accounts.every((a) => a.root);
  } catch (e) {
    if ((e as { code?: string }).code === 'AccessDenied') return false;
    throw e;
  }
}
