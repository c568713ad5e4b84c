// A multipart/form-data body (RFC 7578) read as it arrives, for S3's POST Object: the fields
// before the file part, within a small budget, and then the file part as a stream that ends at its
// closing delimiter. The form's authority is in its fields (the policy and its signature), so they
// are checked before a byte of the file is read, and the file is read only up to the size the
// policy and the service allow: nothing here ever holds a body the sender has not been allowed to send.
import { SvcError, asSvcError } from './errors.ts';

const CRLF_CRLF = new Uint8Array([13, 10, 13, 10]);
const notWellFormed = (why: string) => new SvcError('MalformedPOSTRequest', `The body of your POST request is not well-formed multipart/form-data: ${why}`);
const malformed = (why: string): never => {
  throw notWellFormed(why);
};

/** The boundary a `multipart/form-data` Content-Type names: 1–70 characters (RFC 2046), quoted or not. */
export function formBoundary(contentType: string): string | undefined {
  const m = /;\s*boundary\s*=\s*(?:"([^"\r\n]{1,70})"|([^";,\s]{1,70}))\s*(?:[;,]|$)/i.exec(contentType);
  return m?.[1] ?? m?.[2];
}

/** The form as far as its file part: the fields (names lower-cased, the first of each kept) and the file. */
export interface FormStart {
  fields: Map<string, string>;
  /** The part named `file`; absent when the form has none. Fields after it are not read (S3 ignores them). */
  file?: { filename: string; stream: ReadableStream<Uint8Array> };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
function text(bytes: Uint8Array, what: string): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new SvcError('InvalidArgument', `The form's ${what} is not valid UTF-8.`);
  }
}

/** Where `pattern` first occurs in `data` from `from`, or -1. (The delimiter opens with CR and has no other CR, so this is linear.) */
function find(data: Uint8Array, pattern: Uint8Array, from = 0): number {
  for (let at = data.indexOf(pattern[0]!, from); at >= 0 && at + pattern.length <= data.length; at = data.indexOf(pattern[0]!, at + 1)) {
    let i = 1;
    while (i < pattern.length && data[at + i] === pattern[i]) i++;
    if (i === pattern.length) return at;
  }
  return -1;
}

/** A part's `Content-Disposition: form-data; name="…"; filename="…"`. */
function disposition(headerText: string): { name: string; filename?: string } {
  let value: string | undefined;
  for (const line of headerText.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === 'content-disposition') value = line.slice(colon + 1);
  }
  if (value === undefined || !/^\s*form-data\s*(;|$)/i.test(value)) return malformed('a part has no Content-Disposition: form-data.');
  const params = new Map<string, string>();
  const param = /;\s*([A-Za-z0-9!#$%&'*+.^_`|~-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s"]*))/g;
  for (let m = param.exec(value); m; m = param.exec(value)) {
    const name = m[1]!.toLowerCase();
    if (!params.has(name)) params.set(name, m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3]!);
  }
  const name = params.get('name') ?? malformed('a part has no name.');
  const filename = params.get('filename');
  return filename === undefined ? { name } : { name, filename };
}

/**
 * Reads a form up to its file part. `budget`: the most bytes the fields (and every part's headers)
 * may take; a form whose fields pass it is refused before more is read.
 */
export async function readFormStart(body: ReadableStream<Uint8Array> | null, boundary: string, budget: number): Promise<FormStart> {
  if (body === null) return malformed('the body is empty.');
  const reader = body.getReader();
  // Every delimiter is CRLF "--" boundary; a CRLF is put before the body so that the first is too.
  const delimiter = new TextEncoder().encode(`\r\n--${boundary}`);
  let buf: Uint8Array = new Uint8Array([13, 10]);
  let consumed = 0;
  let ended = false;

  /** Reads more into `buf`; false at the end of the body. */
  const more = async (): Promise<boolean> => {
    if (ended) return false;
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch (e) {
      throw asSvcError(e) ?? new SvcError('IncompleteBody', 'The request body could not be read to its end.');
    }
    if (chunk.done) {
      ended = true;
      return false;
    }
    const next = new Uint8Array(buf.length + chunk.value.length);
    next.set(buf);
    next.set(chunk.value, buf.length);
    buf = next;
    return true;
  };
  /** The bytes before `pattern`, which is consumed too; within what is left of the budget. */
  const until = async (pattern: Uint8Array, what: string): Promise<Uint8Array> => {
    for (let from = 0; ; ) {
      const at = find(buf, pattern, from);
      if (at >= 0) consumed += at + pattern.length;
      if ((at >= 0 ? consumed : consumed + buf.length) > budget) {
        throw new SvcError('MaxPostPreDataLengthExceeded', `Your POST request fields preceding the upload file were too large: they may take ${budget} bytes.`, {}, {
          MaxPostPreDataLengthBytes: String(budget),
        });
      }
      if (at >= 0) {
        const before = buf.subarray(0, at);
        buf = buf.subarray(at + pattern.length);
        return before;
      }
      from = Math.max(0, buf.length - pattern.length + 1);
      if (!(await more())) return malformed(`the body ended inside ${what}.`);
    }
  };
  /** After a delimiter: `--` ends the form; otherwise the line break before the next part's headers. */
  const closes = async (): Promise<boolean> => {
    while (buf.length < 2 && (await more()));
    if (buf[0] === 45 && buf[1] === 45) return true;
    await until(new Uint8Array([13, 10]), 'a delimiter line'); // transport padding, then CRLF
    return false;
  };

  try {
    await until(delimiter, 'the preamble');
    const fields = new Map<string, string>();
    while (!(await closes())) {
      const { name, filename } = disposition(text(await until(CRLF_CRLF, "a part's headers"), "part headers"));
      const lower = name.toLowerCase();
      if (lower === 'file') {
        return { fields, file: { filename: filename ?? '', stream: partStream(reader, buf, delimiter, ended) } };
      }
      const value = text(await until(delimiter, `the field ${name}`), `field ${name}`);
      if (!fields.has(lower)) fields.set(lower, value);
    }
    reader.cancel().catch(() => {});
    return { fields };
  } catch (e) {
    reader.cancel().catch(() => {});
    throw e;
  }
}

/**
 * The file part's bytes, from what was already read (`head`) and then the body, up to the
 * delimiter that ends the part; what follows is not read. A body that ends before that delimiter
 * is an incomplete form, never a shorter file.
 */
function partStream(reader: ReadableStreamDefaultReader<Uint8Array>, head: Uint8Array, delimiter: Uint8Array, endedAlready: boolean): ReadableStream<Uint8Array> {
  let pending = head;
  let ended = endedAlready;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const at = find(pending, delimiter);
        if (at >= 0) {
          if (at > 0) controller.enqueue(pending.subarray(0, at));
          controller.close();
          reader.cancel().catch(() => {});
          return;
        }
        // All but the last bytes, which may be the start of the delimiter. (Handed on as views:
        // no buffer is written again once read into, and the reader copies what it keeps.)
        const safe = pending.length - delimiter.length + 1;
        if (safe > 0) {
          controller.enqueue(pending.subarray(0, safe));
          pending = pending.subarray(safe);
          return;
        }
        if (ended) {
          reader.cancel().catch(() => {});
          controller.error(notWellFormed('the body ended inside the file part (no closing boundary).'));
          return;
        }
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (e) {
          controller.error(asSvcError(e) ?? new SvcError('IncompleteBody', 'The request body could not be read to its end.'));
          return;
        }
        if (chunk.done) {
          ended = true;
          continue;
        }
        const next = new Uint8Array(pending.length + chunk.value.length);
        next.set(pending);
        next.set(chunk.value, pending.length);
        pending = next;
      }
    },
    cancel: (reason) => reader.cancel(reason),
  }, { highWaterMark: 0 });
}
