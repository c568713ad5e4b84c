// Console state shared by every view: the running service, who is signed in, the client they
// sign with, the current route, and notices. Views read these runes and call the client; nothing
// here reaches into the database (the request log aside, which views/Log reads directly).
import { createClient, type Client } from '../client/index.ts';
import type { RunningService } from '../browser/index.ts';
import { ROOT_CREDENTIALS } from '../../protocol/instance.ts';

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

const CREDS_KEY = 'swbucket:console:credentials';
const ROOT: Credentials = { ...ROOT_CREDENTIALS };

function loadCredentials(): Credentials {
  try {
    const saved = JSON.parse(localStorage.getItem(CREDS_KEY) ?? 'null') as Credentials | null;
    if (saved?.accessKeyId && saved.secretAccessKey) return saved;
  } catch {
    // a broken entry falls back to root
  }
  return ROOT;
}

export type Route =
  | { view: 'buckets' }
  | { view: 'objects'; bucket: string; prefix: string }
  | { view: 'uploads' }
  | { view: 'accounts' }
  | { view: 'log' }
  | { view: 'playground' }
  | { view: 'sync' }
  | { view: 'settings' };

/** `#/b/{bucket}/{prefix…}`, `#/log`, … — shareable, and the back button works. */
export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#\/?/, '');
  const [head = '', ...rest] = path.split('/');
  switch (head) {
    case 'b': {
      const bucket = decodeURIComponent(rest[0] ?? '');
      return bucket ? { view: 'objects', bucket, prefix: decodeURIComponent(rest.slice(1).join('/')) } : { view: 'buckets' };
    }
    case 'uploads': case 'accounts': case 'log': case 'playground': case 'sync': case 'settings':
      return { view: head };
    default:
      return { view: 'buckets' };
  }
}

export function hrefOf(route: Route): string {
  if (route.view === 'objects') return `#/b/${encodeURIComponent(route.bucket)}/${route.prefix.split('/').map(encodeURIComponent).join('/')}`;
  return `#/${route.view === 'buckets' ? '' : route.view}`;
}

export interface Notice {
  id: number;
  kind: 'error' | 'info';
  text: string;
}

class ConsoleState {
  service = $state<RunningService | null>(null);
  startError = $state('');
  credentials = $state<Credentials>(loadCredentials());
  route = $state<Route>(parseRoute(typeof location === 'undefined' ? '' : location.hash));
  notices = $state<Notice[]>([]);
  #next = 1;

  /** The client for the current credentials and endpoint. */
  client: Client = $derived(createClient({
    endpoint: `http://${this.service?.endpoint ?? 'svc.localhost'}`,
    accessKeyId: this.credentials.accessKeyId,
    secretAccessKey: this.credentials.secretAccessKey,
  }));

  get isRoot(): boolean {
    return this.credentials.accessKeyId === ROOT.accessKeyId;
  }

  signIn(creds: Credentials): void {
    this.credentials = creds;
    localStorage.setItem(CREDS_KEY, JSON.stringify(creds));
    this.notify('info', `Now signed in as ${creds.accessKeyId}.`);
  }

  signInAsRoot(): void {
    this.signIn(ROOT);
  }

  go(route: Route): void {
    location.hash = hrefOf(route);
  }

  notify(kind: Notice['kind'], text: string): void {
    const id = this.#next++;
    this.notices = [...this.notices, { id, kind, text }];
    setTimeout(() => this.dismiss(id), kind === 'error' ? 10_000 : 4_000);
  }

  dismiss(id: number): void {
    this.notices = this.notices.filter((n) => n.id !== id);
  }

  /** A failure as one line a person can act on: "NoSuchBucket: … (request 9F…)". */
  describe(e: unknown): string {
    if (e && typeof e === 'object' && 'code' in e && 'message' in e) {
      const err = e as { code: string; message: string; requestId?: string | null };
      // IndexedDB itself refused the write (sw/core/errors.ts): not an account quota, the browser's
      // storage for the whole site. Say so, and what frees it.
      if (err.code === 'QuotaExceeded' && err.message.startsWith('The browser refused')) {
        return "The browser's storage for this site is full. Delete objects you no longer need (or abort unfinished uploads), "
          + 'or see Settings → Storage; when even a delete is refused, Settings → Delete all data still works. '
          + `(QuotaExceeded${err.requestId ? `, request ${err.requestId}` : ''})`;
      }
      return `${err.code}: ${err.message}${err.requestId ? ` (request ${err.requestId})` : ''}`;
    }
    return e instanceof Error ? e.message : String(e);
  }

  fail(e: unknown): void {
    this.notify('error', this.describe(e));
  }
}

export const app = new ConsoleState();

if (typeof window !== 'undefined') {
  window.addEventListener('hashchange', () => {
    app.route = parseRoute(location.hash);
  });
}

/** Same rule as the service (docs/protocol.md, "Bucket names"). */
export function bucketNameProblem(name: string): string | null {
  if (name.length < 3 || name.length > 63) return 'A bucket name has 3 to 63 characters.';
  if (!/^[a-z0-9-]+$/.test(name)) return 'Use only lower-case letters, digits and hyphens.';
  if (!/^[a-z0-9].*[a-z0-9]$/.test(name)) return 'Start and end with a letter or a digit.';
  return null;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = -1;
  do {
    v /= 1024;
    u++;
  } while (v >= 1024 && u < units.length - 1);
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}

export function formatDate(d: Date): string {
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

/**
 * Saves an object as a file: a presigned link on this page's mount (a navigation reaches the
 * worker only there) whose ?download= makes the worker answer as an attachment with the name.
 * No `download` attribute on the link: with it Chromium fetches the link past the worker.
 */
export async function downloadObject(bucket: string, key: string): Promise<void> {
  const name = key.slice(key.lastIndexOf('/') + 1) || 'download';
  const url = await app.client.presign(bucket, key, { expiresIn: 300, query: { download: name } });
  const a = document.createElement('a');
  a.href = app.service!.mountUrl(url);
  document.body.append(a);
  a.click();
  a.remove();
}

/** Saves a Blob made in the page as a file named `name` (the browser's download). */
export function saveBlob(blob: Blob, name: string): void {
  const a = document.createElement('a');
  const url = URL.createObjectURL(blob);
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  // The download holds the Blob once it started; the page's URL need not outlive that.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
