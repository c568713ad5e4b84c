/**
 * Serve the worker (sw.js) and the console (swbucket/) from the installed package in `vite dev`,
 * and emit them into `vite build`, under the app's `base`. Nothing is copied into the app, so
 * upgrading swbucket upgrades both.
 *
 * @module swbucket/vite
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import type { ServerResponse } from 'node:http';
import type { Plugin } from 'vite';
import { WORKER_BANNER, packageFiles } from './files.ts';

/** Options of the {@link swbucket} Vite plugin. */
export interface SwbucketPluginOptions {
  /** Serve and emit sw.js. Default true; false for an app whose own worker composes swbucket/sw. */
  worker?: boolean;
  /** Serve and emit the console at `{base}swbucket/`. Default true. */
  console?: boolean;
  /**
   * Name the build's files (its HTML, scripts, styles and imported assets, not `public/`) in the
   * emitted sw.js, which keeps them for offline use as soon as a page starts the service: a part of
   * the app not opened yet (a lazy route) works offline too. Default true; with `worker: false`
   * there is no sw.js to name them in. Pages started with `startService({ offline: false })` keep nothing.
   */
  precache?: boolean;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript', '.css': 'text/css', '.html': 'text/html; charset=utf-8', '.svg': 'image/svg+xml', '.png': 'image/png', '.json': 'application/json',
};

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/**
 * What the plugin appends to the sw.js it emits: the build's files (relative to sw.js), which the
 * worker reads as `self.swbucketPrecache` (sw/worker.ts). The file's bytes change with the build's
 * file names, so a new build installs a new worker, which keeps the new files.
 */
const precacheLine = (names: string[]) =>
  `\n// Added by swbucket/vite: this build's files, kept for offline use.\nself.swbucketPrecache = ${JSON.stringify(names.sort())};\n`;

/**
 * The Vite plugin: serves swbucket's worker and console in `vite dev` and emits them in `vite build`,
 * under the app's `base`, from the installed package.
 *
 * @example
 * // vite.config.ts
 * import { swbucket } from 'swbucket/vite';
 * export default { plugins: [swbucket()] };
 */
export function swbucket(options: SwbucketPluginOptions = {}): Plugin {
  const files = packageFiles();
  // Path within the site (no base) → file on disk.
  const served = new Map<string, string>();
  if (options.worker !== false) served.set('sw.js', files.worker);
  if (options.console !== false) {
    for (const file of filesUnder(files.console)) served.set('swbucket/' + relative(files.console, file).split(sep).join('/'), file);
  }
  let base = '/';
  /** The request's path below the app's base, or null when it is not under the base. */
  const withinBase = (url: string | undefined): string | null => {
    const path = (url ?? '').split('?')[0]!;
    return path.startsWith(base) ? path.slice(base.length) : null;
  };
  const redirect = (res: ServerResponse) => {
    res.statusCode = 301;
    res.setHeader('location', base + 'swbucket/');
    res.end();
  };
  return {
    name: 'swbucket',
    configResolved(config) {
      base = config.base.endsWith('/') ? config.base : config.base + '/';
      // An app's own sw.js in its public folder would be served and shipped over by ours, silently.
      const own = config.publicDir ? join(config.publicDir, 'sw.js') : null;
      if (served.has('sw.js') && own && existsSync(own)) {
        if (!readFileSync(own, 'utf8').startsWith(WORKER_BANNER)) {
          throw new Error(`swbucket/vite: ${own} is your app's own service worker, and the plugin would serve and ship swbucket's sw.js over it. `
            + 'Keep yours and compose swbucket into it (swbucket/sw: README, "An app with its own service worker") with swbucket({ worker: false }), '
            + 'or move yours elsewhere.');
        }
        config.logger.warn(`swbucket/vite: ${own} is a copy from \`swbucket init\`; the plugin serves the installed package's sw.js instead. Delete the copy.`);
      }
    },
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const within = withinBase(req.url);
        if (within === 'swbucket' && served.has('swbucket/index.html')) return redirect(res);
        const file = served.get(within === 'swbucket/' ? 'swbucket/index.html' : within ?? '');
        if (!file) return next();
        res.setHeader('content-type', TYPES[extname(file)] ?? 'application/octet-stream');
        res.setHeader('cache-control', 'no-cache');
        res.end(readFileSync(file));
      });
    },
    configurePreviewServer(server) {
      // The build holds the files; only the folder's name without its slash needs sending on.
      server.middlewares.use((req, res, next) => (withinBase(req.url) === 'swbucket' && served.has('swbucket/index.html') ? redirect(res) : next()));
    },
    generateBundle: {
      // After Vite's own (its HTML pages are emitted there), so that the bundle lists every file.
      order: 'post',
      handler(_, bundle) {
        for (const [fileName, file] of served) {
          const source = fileName === 'sw.js' && options.precache !== false
            ? readFileSync(file, 'utf8') + precacheLine(Object.keys(bundle).filter((name) => !served.has(name) && !name.endsWith('.map')))
            : readFileSync(file);
          this.emitFile({ type: 'asset', fileName, source });
        }
      },
    },
  };
}

export default swbucket;
