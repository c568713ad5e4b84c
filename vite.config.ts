import { defineConfig, type Plugin } from 'vitest/config';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string };

/** One build id shared by the page and its worker, so a page can tell a worker of another build. */
const BUILD_VERSION = `${pkg.version}+${Date.now().toString(36)}`;

/** The worker is its own bundle, one classic script at a fixed, unhashed URL at the scope root. */
async function bundleWorker(minify: boolean): Promise<string> {
  const out = await build({
    entryPoints: ['sw/service-worker.ts'],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'chrome110',
    write: false,
    minify,
    define: { __SWBUCKET_VERSION__: JSON.stringify(BUILD_VERSION) },
  });
  return out.outputFiles[0]!.text;
}

function serviceWorker(): Plugin {
  return {
    name: 'swbucket-service-worker',
    configureServer(server) {
      // Dev: bundled on request, so the worker is always the current source.
      server.middlewares.use('/sw.js', (_req, res, next) => {
        bundleWorker(false).then((code) => {
          res.setHeader('content-type', 'text/javascript');
          res.setHeader('cache-control', 'no-cache');
          res.end(code);
        }, next);
      });
    },
    async generateBundle() {
      this.emitFile({ type: 'asset', fileName: 'sw.js', source: await bundleWorker(true) });
    },
  };
}

export default defineConfig({
  plugins: [svelte(), serviceWorker()],
  define: { __SWBUCKET_VERSION__: JSON.stringify(BUILD_VERSION) },
  test: {
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          setupFiles: ['test/support/setup.ts'],
          environment: 'node',
          testTimeout: 30_000,
        },
      },
      {
        // Real Chromium against the built site: one file at a time, each with its own browser.
        extends: true,
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          globalSetup: ['test/browser/support/global-setup.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 60_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
