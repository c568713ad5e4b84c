// Once per browser run: build the real site (page + dist-site/sw.js) and serve it with `vite preview`,
// exactly what `npm run build && npm run preview` gives a user. The projects of one run ('browser',
// 'firefox', 'webkit', 'webkit-disk') share one build and one server: the first to set up builds and
// starts it, the last to tear down stops it.
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

interface SharedSite {
  users: number;
  ready: Promise<{ url: string; server: PreviewServer }>;
}

const SITE = Symbol.for('swbucket.test.browser-site');
const shared = globalThis as { [SITE]?: SharedSite };

async function startSite(): Promise<{ url: string; server: PreviewServer }> {
  await build({ logLevel: 'warn' });
  const server = await preview({ logLevel: 'warn', preview: { host: 'localhost', port: 4310, strictPort: false } });
  const url = server.resolvedUrls?.local[0]?.replace(/\/$/, '');
  if (!url) {
    await server.close();
    throw new Error('vite preview did not report its URL');
  }
  return { url, server };
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
    await (await site.ready).server.close();
  };
}
