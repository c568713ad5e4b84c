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
  killOnExit(child);
  return { display, stop: () => stopProcess(child) };
}

const EXIT_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/**
 * Kills `child` (its process group with `group`) if this process ends while it runs: a test file
 * that throws before closing its engine, or a vitest worker that is stopped (SIGTERM), leaves no X
 * server or driver behind. After a signal, once no other listener is left, the signal is raised
 * again so the process still ends as it would have.
 */
export function killOnExit(child: ChildProcess, { group = false } = {}): void {
  const kill = () => {
    try {
      if (group && child.pid) process.kill(-child.pid, 'SIGKILL');
      else child.kill('SIGKILL');
    } catch {
      // already gone
    }
  };
  const onSignal = (signal: NodeJS.Signals) => {
    kill();
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  process.once('exit', kill);
  for (const s of EXIT_SIGNALS) process.once(s, onSignal);
  child.once('exit', () => {
    process.off('exit', kill);
    for (const s of EXIT_SIGNALS) process.off(s, onSignal);
  });
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
