// A new user's first ten minutes (issue 16), as the README tells them, in a fresh Vite + React
// (TypeScript) app made from the packed tarball: the plugin, startService(), createClient(), a
// picked File stored with no contentType, listed, shown in <img>, deleted; offline before the first
// upload and after a reload; a deep link opened cold; the console at /swbucket/ of the build; a
// typed Blob from Node against `swbucket serve`. The build in every engine the browser tests drive,
// and `vite dev` in Chromium.
import { describe, it, expect, beforeAll, inject } from 'vitest';
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ENGINE_NAMES, launchEngine, type EngineName, type EnginePage } from '../browser/support/engines.ts';
import { makePng } from '../browser/support/media.ts';
import { TYPESCRIPT_VERSION, VITE_VERSION, freePort, npmInstall, run, serveApp, shellEnv, tempDir, writeFiles } from './support/app.ts';

const APP = {
  'package.json': JSON.stringify({ name: 'react-app', private: true, type: 'module' }),
  // As create-vite's react-ts template has it for the app's own code.
  'tsconfig.json': JSON.stringify({
    compilerOptions: {
      target: 'ES2022', module: 'ESNext', moduleResolution: 'bundler', jsx: 'react-jsx', strict: true, noEmit: true,
      lib: ['ES2022', 'DOM', 'DOM.Iterable'], types: ['vite/client'], skipLibCheck: true, allowImportingTsExtensions: true,
    },
    include: ['src'],
  }),
  'vite.config.ts': `import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { swbucket } from 'swbucket/vite';

export default defineConfig({ plugins: [react(), swbucket()] });
`,
  'index.html': '<!doctype html><html><head><meta charset="utf-8"><title>photos</title></head>'
    + '<body><div id="root"></div><script type="module" src="/src/main.tsx"></script></body></html>',
  'src/main.tsx': `import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import App from './App.tsx';

createRoot(document.getElementById('root')!).render(<StrictMode><App /></StrictMode>);
`,
  // Written from the README's "Add it to your app" only.
  'src/App.tsx': `import { useEffect, useState, type ChangeEvent } from 'react';
import { startService, type RunningService } from 'swbucket/browser';
import { createClient } from 'swbucket/client';

const s3 = createClient({ endpoint: 'http://svc.localhost', accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
const started = startService().then(async (service) => {
  await s3.ensureBucket('photos');
  return service;
});

interface Photo { key: string; src: string; type: string }

export default function App() {
  const [service, setService] = useState<RunningService | null>(null);
  const [photos, setPhotos] = useState<Photo[]>([]);
  const [status, setStatus] = useState('starting');

  async function refresh(svc: RunningService) {
    const { objects } = await s3.listObjects('photos');
    setPhotos(await Promise.all(objects.map(async (o) => ({
      key: o.key,
      src: svc.mountUrl(await s3.presign('photos', o.key)),
      type: (await s3.headObject('photos', o.key)).contentType,
    }))));
    setStatus('ready');
  }

  useEffect(() => {
    started.then(async (svc) => {
      setService(svc);
      await refresh(svc);
    }).catch((e: unknown) => setStatus('error: ' + String(e)));
  }, []);

  async function onPick(event: ChangeEvent<HTMLInputElement>) {
    const file = event.target.files?.[0];
    if (!file || !service) return;
    setStatus('uploading');
    try {
      await s3.putObject('photos', file.name, file);
      await refresh(service);
    } catch (e) {
      setStatus('error: ' + String(e));
    }
  }

  async function remove(key: string) {
    await s3.deleteObject('photos', key);
    await refresh(service!);
  }

  return (
    <main>
      <p id="status">{status}</p>
      <input id="picker" type="file" accept="image/*" onChange={onPick} />
      <ul id="photos">
        {photos.map((p) => (
          <li key={p.key} data-key={p.key} data-type={p.type}>
            <img src={p.src} alt={p.key} />
            <button onClick={() => void remove(p.key)}>Delete</button>
          </li>
        ))}
      </ul>
    </main>
  );
}
`,
  // A Node script of the app: a typed Blob with no contentType, against \`npx swbucket serve\`.
  'blob.mjs': `import { createClient } from 'swbucket/client';

const s3 = createClient({ endpoint: process.argv[2], accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
await s3.ensureBucket('from-node');
await s3.putObject('from-node', 'data.json', new Blob(['{"a":1}'], { type: 'application/json' }));
const head = await s3.headObject('from-node', 'data.json');
const listed = (await s3.listObjects('from-node')).objects.map((o) => o.key);
await s3.deleteObject('from-node', 'data.json');
console.log(JSON.stringify({ type: head.contentType, size: head.size, listed, after: (await s3.listObjects('from-node')).objects.length }));
`,
};

const PNG = makePng(4, 3, (x, y) => [x * 60, y * 80, 200]);

let dir: string;
/** The build's files the worker should keep: its page and scripts. */
let buildFiles: string[];

beforeAll(async () => {
  dir = tempDir('swbucket-react-app-');
  writeFiles(dir, APP);
  await npmInstall(dir, [
    inject('tarball'), `vite@${VITE_VERSION}`, `typescript@${TYPESCRIPT_VERSION}`, '@vitejs/plugin-react', 'react', 'react-dom',
    '@types/react', '@types/react-dom', '@hono/node-server', 'fake-indexeddb',
  ]);
  await run(dir, 'npx', ['tsc', '-p', '.']);
  await run(dir, 'npx', ['vite', 'build', '--logLevel', 'warn']);
  buildFiles = ['index.html', ...readdirSync(join(dir, 'dist/assets')).filter((f) => f.endsWith('.js')).map((f) => `assets/${f}`)];
}, 300_000);

/** Waits for the app's status line to read `want` (or an error), and returns what the page shows. */
async function shown(page: EnginePage, want: string) {
  await page.waitForFunction((w: string) => {
    const s = document.getElementById('status')?.textContent ?? '';
    return s === w || s.startsWith('error');
  }, want, { timeout: 30_000 });
  // Each <img> loaded through the worker (or failed: naturalWidth 0).
  await page.waitForFunction(() => [...document.querySelectorAll('img')].every((i) => i.complete), undefined, { timeout: 15_000 });
  return page.evaluate(() => ({
    status: document.getElementById('status')!.textContent,
    photos: [...document.querySelectorAll<HTMLLIElement>('#photos li')].map((li) => ({
      key: li.dataset.key, type: li.dataset.type, width: li.querySelector('img')!.naturalWidth,
    })),
  }));
}

/** Picks a file in the app's <input type=file>, as the browser hands one over. */
async function pick(page: EnginePage, name: string, bytes: Uint8Array, type: string): Promise<void> {
  await page.evaluate(({ name, bytes, type }: { name: string; bytes: number[]; type: string }) => {
    const input = document.getElementById('picker') as HTMLInputElement;
    const files = new DataTransfer();
    files.items.add(new File([Uint8Array.from(bytes)], name, { type }));
    input.files = files.files;
    input.dispatchEvent(new Event('change', { bubbles: true }));
  }, { name, bytes: [...bytes], type });
}

async function useApp(engineName: EngineName): Promise<void> {
  const engine = await launchEngine(engineName);
  try {
    // First visit, then the network goes before the first upload.
    const first = await serveApp(dir, 'preview');
    const page = await engine.newPage();
    await page.goto(first.url + '/');
    expect(await shown(page, 'ready')).toEqual({ status: 'ready', photos: [] });
    const urls = buildFiles.map((f) => `${first.url}/${f}`);
    expect(await page.evaluate(async (urls: string[]) => {
      const missing = async () => (await Promise.all(urls.map(async (u) => ((await caches.match(u)) ? null : u)))).filter(Boolean);
      for (let i = 0; i < 200 && (await missing()).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
      return missing();
    }, urls), 'the build kept at the first visit').toEqual([]);
    await first.close();

    await pick(page, 'cat.png', PNG, 'image/png');
    const cat = { status: 'ready', photos: [{ key: 'cat.png', type: 'image/png', width: 4 }] };
    expect(await shown(page, 'ready'), 'uploaded offline, stored with its own type, shown').toEqual(cat);
    await page.reload();
    expect(await shown(page, 'ready'), 'reloaded offline').toEqual(cat);

    // A deep link opened cold, on an origin never visited; there a picked file is stored and deleted.
    const second = await serveApp(dir, 'preview');
    try {
      const deep = await engine.newPage();
      await deep.goto(`${second.url}/gallery/view/`);
      expect(await shown(deep, 'ready')).toEqual({ status: 'ready', photos: [] });
      await pick(deep, 'dog.png', PNG, 'image/png');
      expect(await shown(deep, 'ready')).toEqual({ status: 'ready', photos: [{ key: 'dog.png', type: 'image/png', width: 4 }] });

      // The console at /swbucket/ of the build lists the app's bucket.
      const consolePage = await engine.newPage();
      await consolePage.goto(`${second.url}/swbucket/`);
      await consolePage.waitForFunction(() => [...document.querySelectorAll('a')].some((a) => a.textContent?.trim() === 'photos'), undefined, { timeout: 30_000 });

      await deep.evaluate(() => document.querySelector<HTMLButtonElement>('#photos li button')!.click());
      await deep.waitForFunction(() => document.querySelectorAll('#photos li').length === 0, undefined, { timeout: 15_000 });
      expect(await shown(deep, 'ready')).toEqual({ status: 'ready', photos: [] });
    } finally {
      await second.close();
    }
  } finally {
    await engine.close();
  }
}

describe('a fresh Vite + React app from the packed tarball, the README followed', () => {
  for (const engineName of ENGINE_NAMES) {
    it(`${engineName}: a picked File stored and shown; offline before the first upload and after a reload; a deep link cold; the console`, async () => {
      await useApp(engineName);
    });
  }

  // (examples.test.ts runs a plugin app under `vite dev` in every engine; here the React app's own
  // transform and dependency pre-bundling, once.)
  it('under `vite dev` too: a picked File stored and shown, the console', async () => {
    const dev = await serveApp(dir, 'dev');
    try {
      for (const engineName of ['chromium'] as const) {
        const engine = await launchEngine(engineName);
        try {
          const page = await engine.newPage();
          await page.goto(dev.url + '/');
          expect(await shown(page, 'ready'), engineName).toEqual({ status: 'ready', photos: [] });
          await pick(page, 'cat.png', PNG, 'image/png');
          expect(await shown(page, 'ready'), engineName).toEqual({ status: 'ready', photos: [{ key: 'cat.png', type: 'image/png', width: 4 }] });
          const consolePage = await engine.newPage();
          await consolePage.goto(`${dev.url}/swbucket/`);
          await consolePage.waitForFunction(() => [...document.querySelectorAll('a')].some((a) => a.textContent?.trim() === 'photos'), undefined, { timeout: 30_000 });
        } finally {
          await engine.close();
        }
      }
    } finally {
      await dev.close();
    }
  });

  it('in Node, against `npx swbucket serve`: a typed Blob keeps its type, is listed and deleted', async () => {
    const port = await freePort();
    // The bin itself, not through npx: a signal to npx would leave its child serving.
    const server = spawn(join(dir, 'node_modules/.bin/swbucket'), ['serve', '--port', String(port)], { cwd: dir, env: shellEnv(), stdio: 'ignore' });
    try {
      const endpoint = `http://127.0.0.1:${port}`;
      for (let i = 0; i < 300 && !(await fetch(endpoint).then(() => true, () => false)); i++) await new Promise((r) => setTimeout(r, 100));
      expect(JSON.parse(await run(dir, 'node', ['blob.mjs', endpoint]))).toEqual({ type: 'application/json', size: 7, listed: ['data.json'], after: 0 });
    } finally {
      server.kill('SIGTERM');
    }
  });
});
