// A replica as an app adopts it: the packed tarball in a fresh Vite app, the README's
// `startService({ replicas })`, and the package's own `swbucket serve --dialect s3 --data` as the
// remote (a process of its own, stopped and started again to stand for offline). Chromium and
// Firefox are two devices of one user, WebKit a third: a photo stored offline on one reaches the
// others, a reload keeps what is pending, and a note edited on two devices while offline ends with
// both versions kept and the conflict reported on each.
import { describe, it, expect, beforeAll, afterAll, inject } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { launchEngine, type Engine, type EnginePage } from '../browser/support/engines.ts';
import { VITE_VERSION, freePort, npmInstall, run, serveApp, shellEnv, tempDir, writeFiles, type Served } from './support/app.ts';

const PKG = JSON.parse(await import('node:fs').then((fs) => fs.readFileSync('package.json', 'utf8'))) as { devDependencies: Record<string, string> };
const ROOT = { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' };

const APP = {
  'package.json': JSON.stringify({ name: 'replica-app', private: true, type: 'module' }),
  'index.html': '<!doctype html><html><head><meta charset="utf-8"><title>replica app</title></head>'
    + '<body><pre id="out">…</pre><script type="module" src="/main.js"></script></body></html>',
  // The README's replica, with the remote's address from the page's query (the test's port).
  'main.js': `
import { startService } from 'swbucket/browser';
import { createClient } from 'swbucket/client';

const remote = new URLSearchParams(location.search).get('remote');
const service = await startService({
  replicas: [{ bucket: 'photos', remote: { endpoint: remote, region: 'us-east-1', bucket: 'my-app-photos', forcePathStyle: true,
    credentials: { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' } } }],
});
const s3 = createClient({ endpoint: 'http://svc.localhost', accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
window.app = {
  put: (key, text) => s3.putObject('photos', key, text).then(() => null),
  read: async (key) => { try { return await (await s3.getObject('photos', key)).response.text(); } catch { return null; } },
  keys: async () => (await s3.listObjects('photos')).objects.map((o) => o.key).sort(),
  sync: async () => { try { await service.replicas.syncNow(); return null; } catch (e) { return e.message; } },
  status: async () => { const [s] = await service.replicas.status(); return { state: s.state, pending: s.pending, conflicts: s.conflicts }; },
  conflicts: async () => (await service.replicas.conflicts('photos')).map((c) => ({ key: c.key, keptAt: c.keptAt })),
};
document.getElementById('out').textContent = 'ready';
`,
};

let dir: string;
let app: Served;
let remotePort: number;
let remoteData: string;
let remote: ChildProcess | undefined;
let sdk: S3Client;

/** `swbucket serve` from the app's install, in S3's dialect, its data on disk; resolved once it answers. */
async function startRemote(): Promise<void> {
  remote = spawn(join(dir, 'node_modules/.bin/swbucket'), ['serve', '--dialect', 's3', '--port', String(remotePort), '--data', remoteData], { cwd: dir, env: shellEnv(), stdio: 'ignore' });
  for (let i = 0; i < 300 && !(await fetch(`http://127.0.0.1:${remotePort}/`).then(() => true, () => false)); i++) await new Promise((r) => setTimeout(r, 100));
}
async function stopRemote(): Promise<void> {
  const r = remote;
  remote = undefined;
  if (!r || r.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    r.once('exit', () => resolve());
    r.kill('SIGTERM');
  });
}

beforeAll(async () => {
  dir = tempDir('swbucket-replica-app-');
  writeFiles(dir, APP);
  await npmInstall(dir, [inject('tarball'), `vite@${VITE_VERSION}`, ...['@hono/node-server', 'fake-indexeddb', 'lmdb'].map((name) => `${name}@${PKG.devDependencies[name]}`)]);
  await run(dir, 'npx', ['swbucket', 'init', 'public']);
  await run(dir, 'npx', ['vite', 'build']);
  app = await serveApp(dir, 'preview');
  remotePort = await freePort();
  remoteData = tempDir('swbucket-replica-app-remote-');
  await startRemote();
  sdk = new S3Client({ endpoint: `http://127.0.0.1:${remotePort}`, region: 'us-east-1', forcePathStyle: true, credentials: ROOT });
  await sdk.send(new CreateBucketCommand({ Bucket: 'my-app-photos' }));
}, 180_000);
afterAll(async () => {
  sdk?.destroy();
  await stopRemote();
  await app?.close();
});

const remoteKeys = async () => ((await sdk.send(new ListObjectsV2Command({ Bucket: 'my-app-photos' }))).Contents ?? []).map((c) => c.Key!).sort();
const remoteRead = async (Key: string) => (await sdk.send(new GetObjectCommand({ Bucket: 'my-app-photos', Key }))).Body!.transformToString();

type App = {
  put(key: string, text: string): Promise<null>; read(key: string): Promise<string | null>; keys(): Promise<string[]>; sync(): Promise<string | null>;
  status(): Promise<{ state: string; pending: number; conflicts: number }>; conflicts(): Promise<{ key: string; keptAt?: string }[]>;
};
/** Calls window.app[name](...args) in the app's page. */
function call<K extends keyof App>(page: EnginePage, name: K, ...args: Parameters<App[K]>): Promise<Awaited<ReturnType<App[K]>>> {
  return page.evaluate(async (x: { name: string; args: unknown[] }) => {
    const a = (window as unknown as { app: Record<string, (...v: unknown[]) => Promise<unknown>> }).app;
    return a[x.name]!(...x.args);
  }, { name, args }) as Promise<Awaited<ReturnType<App[K]>>>;
}

async function openApp(engine: Engine): Promise<EnginePage> {
  const page = await engine.newPage();
  await page.goto(`${app.url}/?remote=${encodeURIComponent(`http://127.0.0.1:${remotePort}`)}`);
  await page.waitForFunction(() => document.getElementById('out')?.textContent === 'ready', undefined, { timeout: 30_000 });
  return page;
}
/** Rounds until `page`'s replica has nothing pending and its last round went through. */
async function settle(page: EnginePage): Promise<void> {
  await expect.poll(async () => [await call(page, 'sync'), (await call(page, 'status')).pending], { timeout: 30_000 }).toEqual([null, 0]);
}

describe('a replica in a fresh app from the packed tarball, the README followed', () => {
  it('Chromium and Firefox as two devices (WebKit a third): offline writes pushed once the remote is back, a reload with changes pending, a note edited on both kept twice with a conflict on each', { timeout: 150_000 }, async () => {
    const phone = await launchEngine('chromium');
    const laptop = await launchEngine('firefox');
    const tablet = await launchEngine('webkit');
    try {
      const p = await openApp(phone);
      await settle(p);

      // Offline: the write is acknowledged and pending; a round says it cannot reach the remote.
      await stopRemote();
      await call(p, 'put', 'cat.jpg', 'a photo');
      await call(p, 'put', 'note.txt', 'v1');
      expect(await call(p, 'sync')).toMatch(/no answer/);
      await p.reload();
      await p.waitForFunction(() => document.getElementById('out')?.textContent === 'ready', undefined, { timeout: 30_000 });
      expect(await call(p, 'status')).toMatchObject({ pending: 2 });
      await startRemote();
      await settle(p);
      expect(await remoteKeys()).toEqual(['cat.jpg', 'note.txt']);

      // The second device sees the photo.
      const l = await openApp(laptop);
      await settle(l);
      expect([await call(l, 'read', 'cat.jpg'), await call(l, 'read', 'note.txt')]).toEqual(['a photo', 'v1']);

      // Both edit the note while the remote is away; both come back.
      await stopRemote();
      await call(p, 'put', 'note.txt', 'from the phone');
      await call(l, 'put', 'note.txt', 'from the laptop');
      await startRemote();
      await settle(p);
      await settle(l);
      await settle(p);
      const phoneConflicts = await call(p, 'conflicts');
      const laptopConflicts = await call(l, 'conflicts');
      expect(phoneConflicts).toHaveLength(1);
      expect(laptopConflicts).toEqual(phoneConflicts);
      const keptAt = laptopConflicts[0]!.keptAt!;
      expect(keptAt).toMatch(/^note \(conflict .+\)\.txt$/);
      // Both versions, on both devices and on the remote: the one that reached the remote first at
      // the key (either: each device retries on its own once the remote is back), the other beside it.
      const both = [await remoteRead('note.txt'), await remoteRead(keptAt)];
      expect([...both].sort()).toEqual(['from the laptop', 'from the phone']);
      for (const read of [(k: string) => call(p, 'read', k), (k: string) => call(l, 'read', k)]) {
        expect([await read('note.txt'), await read(keptAt)]).toEqual(both);
      }

      // A third device gets all of it.
      const t = await openApp(tablet);
      await settle(t);
      expect(await call(t, 'keys')).toEqual(['cat.jpg', keptAt, 'note.txt'].sort());
      expect(await call(t, 'read', 'cat.jpg')).toBe('a photo');
    } finally {
      await Promise.all([phone.close(), laptop.close(), tablet.close()]);
    }
  });
});
