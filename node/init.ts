// `swbucket init <publicDir>`: copy the prebuilt worker (sw.js) and the console (swbucket/) into
// an app's static folder. Re-running replaces earlier copies, and never a file that is not ours.
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { CONSOLE_MARKER, WORKER_BANNER, packageFiles } from './files.ts';

export interface InitOptions {
  /** Copy the console to `<publicDir>/swbucket/`. Default true. */
  console?: boolean;
  /** Copy the worker to `<publicDir>/sw.js`. Default true (false for an app whose own worker composes swbucket/sw). */
  worker?: boolean;
  /** Replace files that are not swbucket's. Default false. */
  force?: boolean;
}

export interface InitResult {
  version: string;
  written: string[];
}

export class InitError extends Error {}

export function init(publicDir: string, o: InitOptions = {}): InitResult {
  const files = packageFiles();
  const written: string[] = [];
  mkdirSync(publicDir, { recursive: true });
  if (o.worker !== false) {
    const target = join(publicDir, 'sw.js');
    if (existsSync(target) && !o.force && !readFileSync(target, 'utf8').startsWith(WORKER_BANNER)) {
      throw new InitError(`${target} exists and is not swbucket's worker (your app's own?). swbucket leaves it alone.\n`
        + '  If your app has its own service worker, compose swbucket into it (README: "An app with its own service worker")\n'
        + '  and run `swbucket init --no-worker`; to replace the file anyway, add --force.');
    }
    cpSync(files.worker, target);
    written.push(target);
  }
  if (o.console !== false) {
    const target = join(publicDir, 'swbucket');
    if (existsSync(target) && !o.force && !existsSync(join(target, CONSOLE_MARKER))) {
      throw new InitError(`${target} exists and is not swbucket's console. swbucket leaves it alone: move it, add --no-console, or --force.`);
    }
    rmSync(target, { recursive: true, force: true });
    cpSync(files.console, target, { recursive: true });
    writeFileSync(join(target, CONSOLE_MARKER), `swbucket ${files.version}: \`npx swbucket init\` replaces this folder.\n`);
    written.push(target + sep);
  }
  return { version: files.version, written: written.map((p) => relative(process.cwd(), p) + (p.endsWith(sep) ? sep : '')) };
}
