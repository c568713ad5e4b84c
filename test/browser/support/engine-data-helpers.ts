// Helpers for test/browser/engine-data.test.ts: deterministic bytes that Node and the page both make
// (support/lifecycle-helpers.ts's pattern, so Node computes the MD5 and SHA-256 of what the page
// sent with node:crypto, independently of the service's and the client's own MD5 code), and a way to
// run a function in any engine's page with a few tools at hand (the running service, its client,
// those bytes, a SHA-256 of what came back).
import type { EnginePage } from './engines.ts';
import { md5hex, PATTERN_SOURCE } from './lifecycle-helpers.ts';
import type { RunningService } from '../../../src/browser/index.ts';
import type { Client, createClient } from '../../../src/client/index.ts';

export { md5hex, pattern, sha256hex } from './lifecycle-helpers.ts';

export const KiB = 1024;
export const MiB = 1024 * KiB;

/** docs/protocol.md, "ETags and Content-MD5": md5hex(e1 + "-" + … + eN + "-") + "-1". */
export const multipartEtag = (etags: string[]): string => md5hex(etags.map((e) => e + '-').join('')) + '-1';

/** What the built site's page puts on window.swbucket (src/App.svelte). */
export type SwGlobal = RunningService & { createClient: typeof createClient; client: Client };

/** A response as the page read it: status, headers, and its bytes summed up. */
export interface ReadResult {
  status: number;
  headers: Record<string, string>;
  size: number;
  sha256: string;
  /** The bytes themselves when there are at most 64 of them. */
  bytes: number[] | null;
}

export interface ThrownError {
  name: string;
  message: string;
  code?: string;
  status?: number;
}

/** What a function run in the page gets. */
export interface Tools {
  sw: SwGlobal;
  /** The page's origin, e.g. http://localhost:4310 */
  origin: string;
  /** The same bytes as `pattern` in Node. */
  pattern(seed: number, length: number): Uint8Array<ArrayBuffer>;
  /** A type-less Blob of pattern(seed, length). */
  blob(seed: number, length: number): Blob;
  /** Lower-case hex SHA-256 (WebCrypto). */
  sha256(data: Blob | Uint8Array<ArrayBuffer>): Promise<string>;
  /** Reads a response whole (as a Blob, the fast way) and sums it up. */
  read(res: Response): Promise<ReadResult>;
  /** null when `p` resolves; what it rejected with otherwise. */
  thrown(p: Promise<unknown>): Promise<ThrownError | null>;
  sleep(ms: number): Promise<void>;
}

function makeTools(patternSource: string): Tools {
  const gen = new Function(`return (${patternSource})`)() as (seed: number, length: number) => Uint8Array<ArrayBuffer>;
  const hex = (buf: ArrayBuffer) => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, '0')).join('');
  const sha256 = async (data: Blob | Uint8Array<ArrayBuffer>) =>
    hex(await crypto.subtle.digest('SHA-256', data instanceof Blob ? await data.arrayBuffer() : data));
  return {
    sw: (window as unknown as { swbucket: SwGlobal }).swbucket,
    origin: location.origin,
    pattern: gen,
    blob: (seed, length) => new Blob([gen(seed, length)]),
    sha256,
    async read(res) {
      const bytes = new Uint8Array(await (await res.blob()).arrayBuffer());
      return {
        status: res.status,
        headers: Object.fromEntries(res.headers),
        size: bytes.length,
        sha256: await sha256(bytes),
        bytes: bytes.length <= 64 ? Array.from(bytes) : null,
      };
    },
    async thrown(p) {
      try {
        await p;
        return null;
      } catch (e) {
        const o = e as Record<string, unknown> | null;
        return {
          name: String(o?.name), message: String(o?.message),
          ...(o && 'code' in o ? { code: String(o.code) } : {}),
          ...(o && 'status' in o ? { status: Number(o.status) } : {}),
        };
      }
    },
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  };
}

/**
 * Runs `fn` in the page with the tools. `fn` is sent as source text, so it may use only its
 * arguments; `arg` and the result cross as JSON.
 */
export function run<R, A = undefined>(page: EnginePage, fn: (t: Tools, arg: A) => Promise<R>, arg?: A): Promise<R> {
  return page.evaluate(async (x: { fnSrc: string; toolsSrc: string; patternSrc: string; arg: unknown }) => {
    const tools = (new Function(`return (${x.toolsSrc})`)() as (p: string) => unknown)(x.patternSrc);
    const f = new Function(`return (${x.fnSrc})`)() as (t: unknown, a: unknown) => Promise<unknown>;
    return f(tools, x.arg);
  }, { fnSrc: fn.toString(), toolsSrc: makeTools.toString(), patternSrc: PATTERN_SOURCE, arg: (arg ?? null) as unknown }) as Promise<R>;
}

/**
 * Waits until the page at `page` has started the service again (after a reload or a navigation).
 * One that does not says where it stands — the console's status line (its start error, if any),
 * the controller, the registration's workers — so that a rare failure leaves its cause behind.
 */
export async function waitStarted(page: EnginePage): Promise<void> {
  try {
    await page.waitForFunction(() => Boolean((window as { swbucket?: unknown }).swbucket), undefined, { timeout: 20_000 });
  } catch (e) {
    const state = await Promise.race([
      page.evaluate(async () => {
        const reg = await navigator.serviceWorker?.getRegistration().catch(() => undefined);
        return JSON.stringify({
          url: location.href, readyState: document.readyState,
          status: document.querySelector('[data-testid=service-status]')?.textContent?.replace(/\s+/g, ' ').trim() ?? null,
          controller: navigator.serviceWorker?.controller?.scriptURL ?? null,
          registration: reg ? { scope: reg.scope, active: reg.active?.state ?? null, waiting: reg.waiting?.state ?? null, installing: reg.installing?.state ?? null } : null,
        });
      }),
      new Promise<string>((r) => setTimeout(() => r('(the page did not answer within 5 s)'), 5_000)),
    ]).catch((err: unknown) => `(the page could not be read: ${String(err)})`);
    throw new Error(`${(e as Error).message}\nthe page: ${state}`);
  }
}
