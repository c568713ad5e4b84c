// The error a client's call rejects with, as its own class (S3ServiceException, minio's S3Error,
// SvcClientError): a call that succeeds, or fails some other way, fails the test.
export async function rejection<E>(p: Promise<unknown>, type: abstract new (...args: never[]) => E): Promise<E> {
  try {
    await p;
  } catch (e) {
    if (e instanceof type) return e;
    throw e;
  }
  throw new Error('the call succeeded');
}
