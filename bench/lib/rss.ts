// Resident memory of a browser's processes, read from /proc (Linux): every process this Node
// process started, directly or below (the browser, its content or renderer processes, its helpers),
// whose program is the browser's. Sampled every 50 ms while a step runs; per process: VmRSS before,
// at its peak during the step, and after it, and the peaks of its two parts that can grow with a
// body: RssAnon (the process's own memory) and RssShmem (shared memory, which every process that
// maps it counts again). Used by figure 10 (Firefox and Chromium during a 100 MiB PUT).
import { readdirSync, readFileSync } from 'node:fs';

export interface BrowserProcess {
  pid: number;
  /** 'parent' (Firefox) or 'browser' (Chromium), else the child's kind: Firefox's process name
   * (e.g. "Isolated Web Co", "Socket Process"), Chromium's --type (and utility sub-type). */
  kind: string;
}

function read(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** Every live process below `root` (not `root` itself), with its parent's pid. */
function descendants(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = read(`/proc/${name}/stat`);
    if (!stat) continue;
    // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    parentOf.set(Number(name), ppid);
  }
  const out: number[] = [];
  for (const pid of parentOf.keys()) {
    let p: number | undefined = parentOf.get(pid);
    for (let depth = 0; p !== undefined && p > 1 && depth < 64; depth++) {
      if (p === root) {
        out.push(pid);
        break;
      }
      p = parentOf.get(p);
    }
  }
  return out;
}

/** The browser's processes below this Node process: `engine` picks them by their command line. */
export function browserProcesses(engine: 'firefox' | 'chromium'): BrowserProcess[] {
  const out: BrowserProcess[] = [];
  for (const pid of descendants(process.pid)) {
    // Split on spaces too: Chromium's and Firefox's children rewrite their title as one string.
    const cmdline = read(`/proc/${pid}/cmdline`)?.split(/[\0 ]+/).filter(Boolean) ?? [];
    const exe = cmdline[0] ?? '';
    const comm = (read(`/proc/${pid}/comm`) ?? '').trim();
    if (engine === 'firefox') {
      if (!/firefox/.test(exe)) continue;
      out.push({ pid, kind: cmdline.includes('-contentproc') ? comm || 'child' : 'parent' });
    } else {
      if (!/chrom/i.test(exe)) continue;
      const type = cmdline.find((a) => a.startsWith('--type='))?.slice(7);
      const sub = cmdline.find((a) => a.startsWith('--utility-sub-type='))?.slice(19).replace(/\.mojom\..*$/, '');
      out.push({ pid, kind: type ? (sub ? `${type} (${sub})` : type) : 'browser' });
    }
  }
  return out;
}

export interface Rss {
  /** VmRSS, RssAnon and RssShmem, bytes. */
  rss: number;
  anon: number;
  shmem: number;
}

/** The process's resident memory, or null when it is gone. */
export function rssOf(pid: number): Rss | null {
  const status = read(`/proc/${pid}/status`);
  if (!status) return null;
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  const rss = kb('VmRSS');
  return Number.isFinite(rss) ? { rss, anon: kb('RssAnon'), shmem: kb('RssShmem') } : null;
}

export interface ProcessGrowth extends BrowserProcess {
  /** VmRSS, bytes. */
  before: number;
  peak: number;
  after: number;
  /** RssAnon and RssShmem: before and peak, bytes. */
  anon: { before: number; peak: number };
  shmem: { before: number; peak: number };
}

export interface RssWatch {
  /** Per process (those alive at the start and any that appeared): before, peak, after, in bytes. */
  processes: ProcessGrowth[];
  /** The sum over the processes, sample by sample: its value before, its peak, after. */
  total: { before: number; peak: number; after: number };
  samples: number;
}

/**
 * Samples the processes' VmRSS every `intervalMs` while `step` runs (the process list itself is
 * read again every 500 ms, so a process started by the step is caught), then `afterMs` more, and
 * says how each grew. `before` is the mean of 3 samples just before the step.
 */
export async function watchRss(engine: 'firefox' | 'chromium', step: () => Promise<unknown>, { intervalMs = 50, afterMs = 1000 } = {}): Promise<RssWatch> {
  const seen = new Map<number, ProcessGrowth>();
  let list = browserProcesses(engine);
  let listedAt = Date.now();
  const total = { before: 0, peak: 0, after: 0 };
  let samples = 0;
  const sample = (phase: 'before' | 'during' | 'after') => {
    if (Date.now() - listedAt > 500) {
      list = browserProcesses(engine);
      listedAt = Date.now();
    }
    let sum = 0;
    for (const p of list) {
      const now = rssOf(p.pid);
      if (now === null) continue;
      const { rss, anon, shmem } = now;
      sum += rss;
      let g = seen.get(p.pid);
      if (!g) {
        // A process that appears during the step grew from nothing.
        const from = phase === 'before';
        g = { ...p, before: from ? rss : 0, peak: rss, after: rss, anon: { before: from ? anon : 0, peak: anon }, shmem: { before: from ? shmem : 0, peak: shmem } };
        seen.set(p.pid, g);
      }
      if (phase === 'before') {
        g.before = rss;
        g.anon.before = anon;
        g.shmem.before = shmem;
      }
      g.peak = Math.max(g.peak, rss);
      g.anon.peak = Math.max(g.anon.peak, anon);
      g.shmem.peak = Math.max(g.shmem.peak, shmem);
      g.after = rss;
    }
    samples++;
    return sum;
  };
  const befores: number[] = [];
  for (let i = 0; i < 3; i++) {
    befores.push(sample('before'));
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  total.before = befores.reduce((a, b) => a + b, 0) / befores.length;
  total.peak = total.before;
  let finished = false;
  let failure: unknown;
  const running = step().catch((e: unknown) => {
    failure = e;
  }).finally(() => {
    finished = true;
  });
  while (!finished) {
    total.peak = Math.max(total.peak, sample('during'));
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  await running;
  const until = Date.now() + afterMs;
  while (Date.now() < until) {
    const s = sample('after');
    total.peak = Math.max(total.peak, s);
    total.after = s;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  if (failure !== undefined) throw failure;
  return { processes: [...seen.values()], total, samples };
}
