// Issue 23, F9: a data directory has one owner. `swbucket serve --data DIR` holds an OS lock
// (flock) on DIR/swbucket.lock for as long as it runs; the attacks that started a second server on
// a directory in use — its lock file overwritten with garbage, a second server in another pid
// namespace (another container on the same volume) — are refused, and a server killed with
// SIGKILL leaves nothing that keeps the next one out.
import { describe, it, expect, afterEach } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../support/ports.ts';
import { tempDir } from '../support/stores.ts';
import { startServer } from '../../node/server.ts';

const ROOT_DIR = new URL('../../', import.meta.url).pathname;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const running: ChildProcess[] = [];

/** `swbucket serve --data dir`, optionally run under another command (unshare); settles when it listens or exits. */
async function serve(dir: string, under: string[] = []): Promise<{ child: ChildProcess; listening: boolean; code: number | null; out: string }> {
  const port = await freePort();
  const args = [process.execPath, '--import', 'tsx', 'node/cli.ts', 'serve', '--data', dir, '--port', String(port)];
  const child = spawn(under[0] ?? args[0]!, [...under.slice(1), ...(under.length > 0 ? args : args.slice(1))], { cwd: ROOT_DIR, stdio: ['ignore', 'pipe', 'pipe'] });
  running.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { out += d.toString(); });
  const until = Date.now() + 20_000;
  for (;;) {
    if (out.includes('listening on')) return { child, listening: true, code: null, out };
    if (child.exitCode !== null) return { child, listening: false, code: child.exitCode, out };
    if (Date.now() > until) throw new Error(`the server neither started nor exited:\n${out}`);
    await sleep(25);
  }
}

async function kill9(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

afterEach(async () => {
  for (const c of running.splice(0)) await kill9(c);
});

const root = process.getuid?.() === 0;

describe('F9: one server per data directory', () => {
  it('its lock file overwritten with garbage: a second server is still refused', async () => {
    const dir = tempDir();
    const first = await serve(dir);
    expect(first.listening, first.out).toBe(true);
    writeFileSync(join(dir, 'swbucket.lock'), 'garbage\u0000\u00ff not a pid\n');
    const second = await serve(dir);
    expect([second.listening, second.code], second.out).toEqual([false, 1]);
    expect(second.out).toMatch(/is in use by another swbucket server: stop it first/);
  });

  // Creating a pid namespace takes root (CAP_SYS_ADMIN); the suite runs as root in CI.
  it.skipIf(!root)('a second server in another pid namespace (another container on the same volume) is refused', async () => {
    const dir = tempDir();
    const first = await serve(dir);
    expect(first.listening, first.out).toBe(true);
    const probe = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'sh', '-c', 'echo $$']);
    expect(probe.stdout.toString().trim(), 'a new pid namespace: its first process is pid 1').toBe('1');
    const second = await serve(dir, ['unshare', '--pid', '--fork', '--mount-proc']);
    expect([second.listening, second.code], second.out).toEqual([false, 1]);
    expect(second.out).toMatch(/is in use by another swbucket server \(pid \d+, as its lock file says\)/);
  });

  it('a server killed with SIGKILL leaves nothing in the way: the next starts at once, and holds the directory in turn', async () => {
    const dir = tempDir();
    const first = await serve(dir);
    expect(first.listening, first.out).toBe(true);
    await kill9(first.child);
    const second = await serve(dir);
    expect(second.listening, second.out).toBe(true);
    const third = await serve(dir);
    expect([third.listening, third.code], third.out).toEqual([false, 1]);
  });

  it('a lock let go of a moment later (a killed server\'s flock(1) still ending): the next server waits for it and starts', async () => {
    const dir = tempDir();
    // Another holder of the lock that lets go of it 300 ms after it has it.
    const holder = spawn('flock', ['--exclusive', join(dir, 'swbucket.lock'), 'sh', '-c', 'echo held; sleep 0.3'], { stdio: ['ignore', 'pipe', 'ignore'] });
    running.push(holder);
    await new Promise<void>((resolve) => holder.stdout!.on('data', (d: Buffer) => d.toString().includes('held') && resolve()));
    // In this process, so that the directory is claimed at once, while the lock is still held.
    const server = await startServer({ port: 0, dataDir: dir, log: () => {} });
    try {
      expect(holder.exitCode).toBe(0); // it had let go by the time the server listened
    } finally {
      await server.close();
    }
  });
});
