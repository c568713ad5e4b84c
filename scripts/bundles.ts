// The two scripts that run on their own, bundled with everything they import, for both the package
// build (scripts/build.ts) and this repo's Vite config:
// - the standalone service worker (sw/worker.ts), one classic script at a fixed URL;
// - the client's hashing worker, inlined into the client as a string (hash-worker-source.ts).
import { build, type Plugin } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { WORKER_BANNER } from '../protocol/instance.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

async function bundleScript(entry: string, minify: boolean, banner?: string): Promise<string> {
  const out = await build({
    entryPoints: [root + entry],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'chrome110',
    write: false,
    minify,
    legalComments: 'none',
    ...(banner ? { banner: { js: banner } } : {}),
  });
  return out.outputFiles[0]!.text;
}

/** The standalone service worker; the banner names the package and version it came from. */
export function bundleServiceWorker(o: { minify: boolean; version: string }): Promise<string> {
  const banner = `${WORKER_BANNER}${o.version} service worker. Generated: \`npx swbucket init\` replaces it; do not edit. */`;
  return bundleScript('sw/worker.ts', o.minify, banner);
}

export function bundleHashWorker(minify: boolean): Promise<string> {
  return bundleScript('src/client/hash-worker.ts', minify);
}

/** Matches the stub module that stands for the hashing worker's code. */
export const HASH_WORKER_SOURCE = /[\\/]src[\\/]client[\\/]hash-worker-source\.ts$/;

export async function hashWorkerModule(minify: boolean): Promise<string> {
  return `export default ${JSON.stringify(await bundleHashWorker(minify))};\n`;
}

/** esbuild: fill the stub with the bundled hashing worker. */
export function inlineHashWorker(): Plugin {
  return {
    name: 'swbucket-inline-hash-worker',
    setup(b) {
      b.onLoad({ filter: HASH_WORKER_SOURCE }, async () => ({ contents: await hashWorkerModule(true), loader: 'js' }));
    },
  };
}
