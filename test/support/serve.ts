// `swbucket serve` as a separate process, for tests that need a server no code in the test's own
// process shares: a replica's remote, a server to kill. Started on a free port; ready once its
// banner says it listens.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.ts';

const ROOT_DIR = fileURLToPath(new URL('../..', import.meta.url));

export interface Served {
  url: string;
  port: number;
  child: ChildProcess;
  output(): string;
  /** Stops it (SIGTERM, then SIGKILL after 5 s) and waits for it to exit. */
  stop(): Promise<void>;
}

/** `swbucket serve` with `args`, on `port` (a free one by default: the same one again to restart a server). */
export async function serve(args: string[] = [], port?: number): Promise<Served> {
  port ??= await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'node/cli.ts', 'serve', '--port', String(port), ...args], {
    cwd: ROOT_DIR,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-8000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  await new Promise<void>((resolve, reject) => {
    const deadline = setTimeout(() => reject(new Error(`swbucket serve did not start within 30 s:\n${out}`)), 30_000);
    const check = () => {
      if (out.includes('listening on')) {
        clearTimeout(deadline);
        child.stdout!.off('data', check);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(deadline);
      reject(new Error(`swbucket serve exited with ${code}:\n${out}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    child,
    output: () => out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const force = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(force);
    },
  };
}
