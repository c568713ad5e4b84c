// Once per browser run: build the real site (page + sw.js) and serve it with `vite preview`, exactly
// what `npm run build && npm run preview` gives a user. The projects of one run ('browser', 'firefox',
// 'webkit', 'webkit-disk') share one build and one server: the first to set up builds and starts it,
// the last to tear down stops it. The server serves this run's own build, from a temporary folder:
// another run in the same checkout rebuilding dist-site/ would otherwise empty the files under it
// (a page then loads as an empty document now and then). dist-site/ gets a copy, for the tests that
// read the built files.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, preview, type PreviewServer } from 'vite';
import type { TestProject } from 'vitest/node';
import { checkEngine, ENGINE_NAMES, type EngineName } from './engines.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The preview server's origin, e.g. http://localhost:4310 */
    baseURL: string;
    /** The browser engine this project's tests run in (support/engines.ts); 'chromium' when not set. */
    engine: EngineName;
  }
}

interface Site {
  url: string;
  server: PreviewServer;
  outDir: string;
}

interface SharedSite {
  users: number;
  ready: Promise<Site>;
}

const SITE = Symbol.for('swbucket.test.browser-site');
const shared = globalThis as { [SITE]?: SharedSite };

async function startSite(): Promise<Site> {
  const outDir = mkdtempSync(join(tmpdir(), 'swbucket-site-'));
  try {
    await build({ logLevel: 'warn', build: { outDir, emptyOutDir: true } });
    rmSync('dist-site', { recursive: true, force: true });
    cpSync(outDir, 'dist-site', { recursive: true });
    const server = await preview({ logLevel: 'warn', build: { outDir }, preview: { host: 'localhost', port: 4310, strictPort: false } });
    const url = server.resolvedUrls?.local[0]?.replace(/\/$/, '');
    if (!url) {
      await server.close();
      throw new Error('vite preview did not report its URL');
    }
    return { url, server, outDir };
  } catch (e) {
    rmSync(outDir, { recursive: true, force: true });
    throw e;
  }
}

export default async function setup(project: TestProject) {
  const engine = project.getProvidedContext().engine ?? 'chromium';
  if (!ENGINE_NAMES.includes(engine)) throw new Error(`project ${project.name}: unknown engine "${engine}"`);
  await checkEngine(engine); // fail first, with what to install, when the browser is missing
  const site = shared[SITE] ??= { users: 0, ready: startSite() };
  site.users++;
  let url: string;
  try {
    ({ url } = await site.ready);
  } catch (e) {
    if (--site.users === 0) delete shared[SITE];
    throw e;
  }
  project.provide('baseURL', url);
  project.provide('engine', engine);
  return async () => {
    if (--site.users > 0) return;
    delete shared[SITE];
    const { server, outDir } = await site.ready;
    await server.close();
    rmSync(outDir, { recursive: true, force: true });
  };
}
