// What the store throws, in its own terms: a refusal it can name rather than a result it returns.
// The store knows nothing of HTTP; core/errors.ts decides what a client is told.

/** IndexedDB refused a write because the browser will not store more. The write changed nothing. */
export class StoreQuotaError extends Error {
  override readonly name = 'StoreQuotaError';
  constructor(cause: unknown) {
    super('The browser refused to store more data.', { cause });
  }
}

/** Errors thrown by IndexedDB when the browser refuses to store more. */
export function isQuotaError(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { name?: unknown }).name === 'QuotaExceededError';
}
