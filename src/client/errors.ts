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

/** What a HEAD or a bodiless error answer means, since it carries no XML. */
const CODE_OF_STATUS: Record<number, string> = {
  304: 'NotModified', 400: 'BadRequest', 403: 'AccessDenied', 404: 'NotFound', 405: 'MethodNotAllowed',
  409: 'Conflict', 411: 'MissingContentLength', 416: 'InvalidRange', 500: 'InternalError', 503: 'ServiceUnavailable',
};

export async function errorFrom(res: Response): Promise<SvcClientError> {
  const requestId = res.headers.get('x-svc-request-id');
  const text = res.body ? await res.text().catch(() => '') : '';
  const field = (name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1];
  const code = field('Code') ?? CODE_OF_STATUS[res.status] ?? `HTTP${res.status}`;
  const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  return new SvcClientError(code, res.status, unescape(field('Message') ?? `${res.status} ${res.statusText}`.trim()), requestId, field('Resource') ?? null);
}
