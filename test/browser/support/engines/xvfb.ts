// An X server of our own for a browser that has no headless mode (MiniBrowser): Xvfb picks a free
// display number itself (-displayfd), so several can run side by side.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { findExecutable } from './find.ts';

export interface Xvfb {
  /** ":N", for DISPLAY. */
  display: string;
  stop(): Promise<void>;
}

export function findXvfb(): string {
  return findExecutable({ what: 'Xvfb', paths: ['/usr/bin/Xvfb'], commands: ['Xvfb'], install: 'apt-get install xvfb' });
}

export async function startXvfb(): Promise<Xvfb> {
  const child = spawn(findXvfb(), ['-displayfd', '3', '-screen', '0', '1280x1024x24', '-nolisten', 'tcp'], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()).length > 4000 && (stderr = stderr.slice(-4000)));
  const display = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error('Xvfb did not report a display within 10 s')), 10_000);
    function fail(e: Error) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${e.message}\n${stderr}`));
    }
    (child.stdio[3] as Readable).on('data', (d: Buffer) => {
      out += d.toString();
      const m = /^(\d+)\n/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(':' + m[1]);
      }
    });
    child.once('error', fail);
    child.once('exit', (code, signal) => fail(new Error(`Xvfb exited (${code ?? signal}) before reporting a display`)));
  });
  child.removeAllListeners('exit');
  return { display, stop: () => stopProcess(child) };
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
export function stopProcess(child: ChildProcess, { graceMs = 3000, group = false } = {}): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const signal = (s: NodeJS.Signals) => {
      try {
        if (group && child.pid) process.kill(-child.pid, s);
        else child.kill(s);
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => signal('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      if (group) signal('SIGKILL'); // what the leader left behind in its group
      resolve();
    });
    signal('SIGTERM');
  });
}
