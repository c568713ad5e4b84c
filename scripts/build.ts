// The package build: `npm run build:package` → dist/
//   lib/*.js      the entry points (ESM, dependencies left as imports for the app's bundler)
//   bundle.js     swbucket/bundle: the root entry, self-contained, for a page without a bundler
//   types/        their .d.ts
//   sw.js         the standalone service worker, everything bundled in
//   console/      the console as static files with relative URLs (served at any `{base}swbucket/`)
import { build as esbuild } from 'esbuild';
import { build as vite } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { HASH_WORKER_SOURCE, bundleServiceWorker, hashWorkerModule, inlineHashWorker } from './bundles.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = root + 'dist/';
const { version } = JSON.parse(readFileSync(root + 'package.json', 'utf8')) as { version: string };

const ENTRIES = {
  index: 'src/index.ts',
  client: 'src/client/index.ts',
  browser: 'src/browser/index.ts',
  sw: 'sw/index.ts',
  node: 'node/index.ts',
  vite: 'node/vite.ts',
  cli: 'node/cli.ts',
};

async function library(): Promise<void> {
  await esbuild({
    entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([name, path]) => [name, root + path])),
    outdir: dist + 'lib',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    // The app's bundler resolves (and dedupes) dependencies; Node built-ins stay imports too.
    packages: 'external',
    chunkNames: 'chunks/[name]-[hash]',
    plugins: [inlineHashWorker()],
    logLevel: 'warning',
  });
  const cli = dist + 'lib/cli.js';
  writeFileSync(cli, '#!/usr/bin/env node\n' + readFileSync(cli, 'utf8'));
  chmodSync(cli, 0o755);
}

/**
 * swbucket/bundle: everything of the root entry as one ES module with nothing left to resolve (no
 * bare imports, the lazy parts inlined), for a page with no bundler and no import map.
 */
async function standalone(): Promise<void> {
  await esbuild({
    entryPoints: { bundle: root + 'src/index.ts' },
    outdir: dist,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    banner: { js: `/* swbucket ${version}: swbucket/bundle (MIT). */` },
    plugins: [inlineHashWorker()],
    logLevel: 'warning',
  });
}

async function consoleApp(): Promise<void> {
  await vite({
    configFile: false,
    root: root + 'src/console',
    base: './',
    logLevel: 'warn',
    plugins: [svelte(), { name: 'swbucket-hash-worker', load: (id) => (HASH_WORKER_SOURCE.test(id) ? hashWorkerModule(true) : null) }],
    build: { outDir: dist + 'console', emptyOutDir: true },
  });
}

function types(): void {
  execFileSync(process.execPath, [root + 'node_modules/typescript/bin/tsc', '-p', root + 'tsconfig.build.json'], { stdio: 'inherit' });
}

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
await Promise.all([
  library(),
  standalone(),
  bundleServiceWorker({ minify: true, version }).then((code) => writeFileSync(dist + 'sw.js', code)),
  consoleApp(),
]);
types();
console.log(`swbucket ${version}: dist/ built`);
