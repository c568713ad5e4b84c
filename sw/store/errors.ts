// What the store throws, in its own terms: a refusal it can name rather than a result it returns.
// The store knows nothing of HTTP; core/errors.ts decides what a client is told.

/**
 * The storage under the store refused a write for lack of room: the browser's quota for the site
 * (IndexedDB), or a full disk (the server's lmdb store). The write changed nothing. The message
 * says which, in words a client is shown.
 */
export class StoreQuotaError extends Error {
  override readonly name = 'StoreQuotaError';
  constructor(cause: unknown, message = 'The browser refused to store more data.') {
    super(message, { cause });
  }
}

/** Errors thrown by IndexedDB when the browser refuses to store more. */
export function isQuotaError(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { name?: unknown }).name === 'QuotaExceededError';
}

/**
 * The store refused a write at one of its own limits (a bucket that has handed out every version
 * id a request can name): changed nothing; the message says what to do.
 */
export class StoreLimitError extends Error {
  override readonly name = 'StoreLimitError';
}

/**
 * The object is listed from a replica's remote but its bytes are not here yet (a bucket in the
 * read-through `cache` mode): whoever asked fetches them (the replica) and asks again.
 */
export class NotFetchedError extends Error {
  override readonly name = 'NotFetchedError';
  constructor(readonly bucket: string, readonly key: string) {
    super(`${key} in ${bucket} is listed from the remote and not fetched yet.`);
  }
}

/**
 * The database could not be opened in time: a deletion or an upgrade of it waits for another
 * connection to close (another tab of the site, or code that opened it itself). Nothing was
 * done; a later request tries again.
 */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
}
