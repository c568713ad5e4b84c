// Once per browser run: build the real site (page + dist-site/sw.js) and serve it with `vite preview`,
// exactly what `npm run build && npm run preview` gives a user.
import { build, preview, type PreviewServer } from 'vite';
import type { TestProject } from 'vitest/node';
import { findChromium } from './chromium.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The preview server's origin, e.g. http://localhost:4310 */
    baseURL: string;
  }
}

let server: PreviewServer | undefined;

export default async function setup(project: TestProject) {
  findChromium(); // fail first, with the install hint, when there is no browser
  await build({ logLevel: 'warn' });
  server = await preview({ logLevel: 'warn', preview: { host: 'localhost', port: 4310, strictPort: false } });
  const url = server.resolvedUrls?.local[0]?.replace(/\/$/, '');
  if (!url) throw new Error('vite preview did not report its URL');
  project.provide('baseURL', url);
  return async () => {
    await server?.close();
  };
}
