// Where the prebuilt browser files of the package are: dist/sw.js (the standalone worker) and
// dist/console/ (the console). Found from this module's own URL, bundled or not, by walking up to
// swbucket's package.json.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface PackageFiles {
  version: string;
  /** The standalone service worker script. */
  worker: string;
  /** The console's folder (index.html and assets/). */
  console: string;
}

export function packageFiles(): PackageFiles {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version: string };
      if (pkg.name === 'swbucket') {
        const files = { version: pkg.version, worker: join(dir, 'dist', 'sw.js'), console: join(dir, 'dist', 'console') };
        if (!existsSync(files.worker)) throw new Error(`swbucket: ${files.worker} is missing. In a clone of swbucket, run \`npm run build:package\` first.`);
        return files;
      }
    }
    const up = dirname(dir);
    if (up === dir) throw new Error('swbucket: cannot find the swbucket package folder above ' + fileURLToPath(import.meta.url));
    dir = up;
  }
}

export { WORKER_BANNER } from '../protocol/instance.ts';
/** A file that marks a console folder as swbucket's, so a re-run may replace it. */
export const CONSOLE_MARKER = '.swbucket-console';
