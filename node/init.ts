// `swbucket init <publicDir>`: copy the prebuilt worker (sw.js) and the console (swbucket/) into
// an app's static folder. Re-running replaces earlier copies, and never a file that is not ours.
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { CONSOLE_MARKER, WORKER_BANNER, packageFiles } from './files.ts';

/** Options of {@link init} (and of `npx swbucket init`). */
export interface InitOptions {
  /** Copy the console to `<publicDir>/swbucket/`. Default true. */
  console?: boolean;
  /** Copy the worker to `<publicDir>/sw.js`. Default true (false for an app whose own worker composes swbucket/sw). */
  worker?: boolean;
  /** Replace files that are not swbucket's. Default false. */
  force?: boolean;
}

/** What {@link init} copied. */
export interface InitResult {
  /** The swbucket version of the copied files. */
  version: string;
  /** The files written, relative to the public folder. */
  written: string[];
}

/** What {@link init} throws when it would overwrite a file that is not swbucket's (pass `force`), or cannot write. */
export class InitError extends Error {}

/**
 * Copies swbucket's worker (`sw.js`) and console (`swbucket/`) into an app's public folder, as
 * `npx swbucket init <publicDir>` does, so that its dev server and build serve them.
 */
export function init(publicDir: string, o: InitOptions = {}): InitResult {
  const files = packageFiles();
  const worker = o.worker === false ? null : join(publicDir, 'sw.js');
  const consoleDir = o.console === false ? null : join(publicDir, 'swbucket');
  // Every refusal before anything is written, so a refused init leaves the folder as it was.
  if (worker && existsSync(worker) && !o.force && !readFileSync(worker, 'utf8').startsWith(WORKER_BANNER)) {
    throw new InitError(`${worker} exists and is not swbucket's worker (your app's own?). swbucket leaves it alone.\n`
      + '  If your app has its own service worker, compose swbucket into it with createFetchHandler() from swbucket/sw\n'
      + `  (README: "An app with its own service worker") and run \`swbucket init ${publicDir} --no-worker\` for the console;\n`
      + '  to replace the file anyway, add --force.');
  }
  if (consoleDir && existsSync(consoleDir) && !o.force && !existsSync(join(consoleDir, CONSOLE_MARKER))) {
    throw new InitError(`${consoleDir} exists and is not swbucket's console. swbucket leaves it alone: move it, add --no-console, or --force.`);
  }
  mkdirSync(publicDir, { recursive: true });
  const written: string[] = [];
  if (worker) {
    cpSync(files.worker, worker);
    written.push(relative(process.cwd(), worker));
  }
  if (consoleDir) {
    rmSync(consoleDir, { recursive: true, force: true });
    cpSync(files.console, consoleDir, { recursive: true });
    writeFileSync(join(consoleDir, CONSOLE_MARKER), `swbucket ${files.version}: \`npx swbucket init\` replaces this folder.\n`);
    written.push(relative(process.cwd(), consoleDir) + sep);
  }
  return { version: files.version, written };
}
