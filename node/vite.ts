// swbucket/vite: serve the worker (sw.js) and the console (swbucket/) from the installed package in
// `vite dev`, and emit them into `vite build`, under the app's `base`. Nothing is copied into the
// app, so upgrading swbucket upgrades both.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import type { Plugin } from 'vite';
import { packageFiles } from './files.ts';

export interface SwbucketPluginOptions {
  /** Serve and emit sw.js. Default true; false for an app whose own worker composes swbucket/sw. */
  worker?: boolean;
  /** Serve and emit the console at `{base}swbucket/`. Default true. */
  console?: boolean;
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

export function swbucket(options: SwbucketPluginOptions = {}): Plugin {
  const files = packageFiles();
  // Path within the site (no base) → file on disk.
  const served = new Map<string, string>();
  if (options.worker !== false) served.set('sw.js', files.worker);
  if (options.console !== false) {
    for (const file of filesUnder(files.console)) served.set('swbucket/' + relative(files.console, file).split(sep).join('/'), file);
  }
  let base = '/';
  return {
    name: 'swbucket',
    configResolved(config) {
      base = config.base.endsWith('/') ? config.base : config.base + '/';
    },
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const path = (req.url ?? '').split('?')[0]!;
        // The dev server may hand middlewares the URL with or without its base.
        const within = path.startsWith(base) ? path.slice(base.length) : path.slice(1);
        const file = served.get(within === 'swbucket' || within === 'swbucket/' ? 'swbucket/index.html' : within);
        if (!file) return next();
        if (within === 'swbucket') {
          res.statusCode = 301;
          res.setHeader('location', base + 'swbucket/');
          return res.end();
        }
        res.setHeader('content-type', TYPES[extname(file)] ?? 'application/octet-stream');
        res.setHeader('cache-control', 'no-cache');
        res.end(readFileSync(file));
      });
    },
    generateBundle() {
      for (const [fileName, file] of served) this.emitFile({ type: 'asset', fileName, source: readFileSync(file) });
    },
  };
}

export default swbucket;
