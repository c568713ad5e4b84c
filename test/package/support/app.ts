// A fresh app in a temporary folder that uses swbucket as any app would: the packed tarball
// installed by npm, the app's own Vite, the `swbucket` bin, `vite build` and `vite preview`.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../support/ports.ts';

export { freePort };

const exec = promisify(execFile);

/** The Vite and TypeScript this repo tests with, so the app's install comes from npm's cache. */
export const VITE_VERSION = (JSON.parse(readFileSync('node_modules/vite/package.json', 'utf8')) as { version: string }).version;
export const TYPESCRIPT_VERSION = (JSON.parse(readFileSync('node_modules/typescript/package.json', 'utf8')) as { version: string }).version;

export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * The environment of a developer's shell: without what the test runner sets (NODE_ENV=test would
 * make `vite build` a development build, VITEST_* would leak into the app's own tooling).
 */
export function shellEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'NODE_ENV' && !name.startsWith('VITEST') && name !== 'TEST'));
}

/** Runs a command in the app; rejects with its output when it fails. */
export async function run(dir: string, command: string, args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await exec(command, args, { cwd: dir, env: shellEnv(), maxBuffer: 64 * 1024 * 1024 });
    return stdout + stderr;
  } catch (e) {
    const { stdout = '', stderr = '' } = e as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${dir}:\n${stdout}\n${stderr}`);
  }
}

export function npmInstall(dir: string, packages: string[]): Promise<string> {
  return run(dir, 'npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...packages]);
}


export interface Served {
  url: string;
  close(): Promise<void>;
}

/** `vite <command>` (dev or preview) in the app on a free port, resolved once it answers. */
export async function serveApp(dir: string, command: 'preview' | 'dev', args: string[] = []): Promise<Served> {
  const port = await freePort();
  const vite = join(dir, 'node_modules', 'vite', 'bin', 'vite.js');
  const argv = command === 'dev' ? [vite, '--port', String(port), '--strictPort', ...args] : [vite, 'preview', '--port', String(port), '--strictPort', ...args];
  const child: ChildProcess = spawn(process.execPath, argv, { cwd: dir, env: shellEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const url = `http://localhost:${port}`;
  const until = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`vite ${command} exited: ${output}`);
    try {
      await fetch(url + '/');
      break;
    } catch {
      if (Date.now() > until) throw new Error(`vite ${command} did not answer on ${url}: ${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url,
    close: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}
