/** A failure answered by the service, with its code, status, message and request id. */
export class SvcClientError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly requestId: string | null,
    readonly resource: string | null = null,
  ) {
    super(message);
    this.name = 'SvcClientError';
  }
}

/** What a HEAD or a bodiless error answer means, since it carries no XML: its code and what to do. */
const OF_STATUS: Record<number, [code: string, message: string]> = {
  304: ['NotModified', 'Not modified.'],
  400: ['BadRequest', 'The request is not valid.'],
  403: ['AccessDenied', 'Access denied: check the accessKeyId and secretAccessKey, and that the bucket is this account\'s (or public-read, for reads).'],
  404: ['NotFound', 'Not found: the bucket or the key does not exist.'],
  405: ['MethodNotAllowed', 'This method is not allowed here.'],
  409: ['Conflict', 'The request conflicts with the state of the bucket or object.'],
  411: ['MissingContentLength', 'The request needs a Content-Length.'],
  416: ['InvalidRange', 'The range is outside the object.'],
  500: ['InternalError', 'The service failed; the worker\'s console has the error.'],
  503: ['ServiceUnavailable', 'The service is not available.'],
};

export async function errorFrom(res: Response, method = 'GET'): Promise<SvcClientError> {
  const requestId = res.headers.get('x-svc-request-id') ?? res.headers.get('x-nos-request-id');
  const text = res.body ? await res.text().catch(() => '') : '';
  const field = (name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1];
  const [statusCode, statusMessage] = OF_STATUS[res.status] ?? [`HTTP${res.status}`, `${res.status} ${res.statusText}`.trim()];
  const code = field('Code') ?? statusCode;
  const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  const said = field('Message');
  const message = said !== undefined ? unescape(said)
    : method === 'HEAD' ? `${statusMessage} (A HEAD answer has no body, so the service's own message is not shown: the same request as a GET shows it.)`
    : statusMessage;
  return new SvcClientError(code, res.status, message, requestId, field('Resource') ?? null);
}
