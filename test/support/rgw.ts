// Ceph's RADOS Gateway (Debian's radosgw, Ceph 16) on loopback: an S3 server no one here wrote, for
// the tests of a replica that syncs with a remote bucket. Debian ships no vstart.sh, so the cluster
// is made by hand: one monitor bound to 127.0.0.1 (msgr2 only), OSDs on memstore (in memory, each
// in a CRUSH host of its own so that pools keep one copy per OSD), no manager (radosgw creates its
// pools without one), and radosgw's beast frontend on 127.0.0.1. Everything a cluster writes is in
// one temporary directory (config, keyrings, data, logs, admin sockets, pid files); every command
// is given that config with -c, so nothing reads or writes /etc/ceph, /var/lib/ceph or
// /var/log/ceph. Each wait is for a condition, under one deadline for the whole start; a failure
// says which step failed, what to install, and the tail of the logs that tell why.
//
// Measured here (2 cores): started in ~2.5 s (the monitor proposes each change at once instead of
// gathering them for a second, which took 14 s), stopped in ~0.3 s, ~240 MiB resident with 3 OSDs
// (~550 MiB with a manager). Concurrent starts are safe: each has its own directory, ports and fsid.
//
//   const rgw = await startRgw();          // in beforeAll (give the hook 100 s: the deadline is 90 s)
//   new S3Client({ endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true,
//                  credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey } })
//   await rgw.stop();                      // in afterAll
//
// SWBUCKET_KEEP_RGW=1 keeps the directory after stop() (and after a failed start), to read its logs.
// A cluster whose test process died without stopping it (a killed worker) is ended by the next
// startRgw() on this machine: its daemons' pids are in its directory, with the owner's pid.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { appendFileSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.ts';
import http from 'node:http';
import { signedHeaders } from './s3-sign.ts';

/** Each program this needs, and the Debian package that has it. */
const PROGRAMS = {
  'ceph-mon': 'ceph-mon',
  monmaptool: 'ceph-base',
  'ceph-osd': 'ceph-osd',
  radosgw: 'radosgw',
  'radosgw-admin': 'ceph-common',
  ceph: 'ceph-common',
  'ceph-authtool': 'ceph-common',
} as const;
const MGR_PROGRAM = { 'ceph-mgr': 'ceph-mgr' } as const;
export const RGW_INSTALL = 'apt-get install -y ceph-mon ceph-osd ceph-mgr radosgw ceph-common';
const DIR_PREFIX = 'swbucket-rgw-';

export interface RgwOptions {
  /** OSDs, each in a CRUSH host of its own (default 3): pools keep min(osds, 3) copies, min_size 2 when there are 3. */
  osds?: number;
  /** Run a manager too (ceph-mgr, ~300 MiB more): needed only for `ceph osd df`, `ceph pg ls` and the like. */
  mgr?: boolean;
  /** Each memstore OSD's capacity in bytes (default 2 GiB; memory is used only as data is stored). */
  osdBytes?: number;
  /** The whole start's deadline (default 90 s). */
  timeoutMs?: number;
}

export interface RgwUser {
  uid: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export interface Rgw {
  /** http://127.0.0.1:PORT: path-style requests (any Host is routed by its path). */
  endpoint: string;
  port: number;
  /** The region to sign for: us-east-1 (radosgw checks a signature with the region its credential names, any region). */
  region: string;
  /** A user made at start ("tester"). */
  accessKeyId: string;
  secretAccessKey: string;
  /** The cluster's directory: ceph.conf, keyring, log/ (mon.a.log, osd.N.log, client.rgw.log, *.out). */
  dir: string;
  /** Another S3 user, with keys of its own (random unless given). */
  createUser(uid: string, keys?: { accessKeyId?: string; secretAccessKey?: string }): Promise<RgwUser>;
  /** radosgw-admin with this cluster's config; its stdout. */
  admin(...args: string[]): Promise<string>;
  /** The ceph CLI with this cluster's config; its stdout (without a manager, commands that need one hang: they time out). */
  ceph(...args: string[]): Promise<string>;
  /** The last lines of a log in log/ (default client.rgw.log), for a failing test's message. */
  logTail(name?: string, lines?: number): string;
  /** Stops radosgw, the OSDs and the monitor (SIGTERM, SIGKILL after 10 s), then removes the directory. */
  stop(): Promise<void>;
}

interface Daemon {
  name: string;
  child: ChildProcess;
  exited: Promise<void>;
  log: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const alive = (d: Daemon) => d.child.exitCode === null && d.child.signalCode === null;
const keepDirs = () => process.env.SWBUCKET_KEEP_RGW === '1';

function tail(path: string, lines = 30): string {
  try {
    const all = readFileSync(path, 'utf8').split('\n');
    return all.slice(-lines - 1).join('\n').trimEnd();
  } catch {
    return `(no ${path})`;
  }
}

/** Clusters started by this process and not yet stopped, ended if the process exits first. */
const running = new Set<{ pids: () => number[]; dir: string }>();
let exitHookSet = false;
function onExitEndAll(): void {
  if (exitHookSet) return;
  exitHookSet = true;
  process.on('exit', () => {
    for (const c of running) {
      for (const pid of c.pids()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
      if (!keepDirs()) rmSync(c.dir, { recursive: true, force: true });
    }
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Clusters left by test processes that died without stopping them: each daemon whose pid is in
 * the directory's `pids` and whose command line names that directory is killed, and the
 * directory removed. A directory whose owner lives is left alone.
 */
function endOrphans(): void {
  let names: string[];
  try {
    names = readdirSync(tmpdir()).filter((n) => n.startsWith(DIR_PREFIX));
  } catch {
    return;
  }
  for (const name of names) {
    const dir = join(tmpdir(), name);
    let owner: number;
    try {
      owner = Number(readFileSync(join(dir, 'owner'), 'utf8'));
    } catch {
      continue; // being made right now, or not ours
    }
    if (!Number.isInteger(owner) || owner <= 0 || isAlive(owner)) continue;
    let pids: number[] = [];
    try {
      pids = readFileSync(join(dir, 'pids'), 'utf8').split('\n').filter(Boolean).map(Number);
    } catch {
      /* none started */
    }
    for (const pid of pids) {
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir)) process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    if (!keepDirs()) rmSync(dir, { recursive: true, force: true });
  }
}

function missingPrograms(mgr: boolean): string[] {
  const need: Record<string, string> = { ...PROGRAMS, ...(mgr ? MGR_PROGRAM : {}) };
  const missing = new Set<string>();
  for (const [program, pkg] of Object.entries(need)) if (!existsSync(`/usr/bin/${program}`)) missing.add(pkg);
  return [...missing];
}

function conf(o: { dir: string; fsid: string; monPort: number; rgwPort: number; osds: number; osdBytes: number }): string {
  const { dir } = o;
  const size = Math.min(3, o.osds);
  const minSize = size >= 3 ? 2 : 1;
  return `# A test cluster (test/support/rgw.ts): everything under ${dir}.
[global]
fsid = ${o.fsid}
mon host = [v2:127.0.0.1:${o.monPort}]
mon initial members = a
public addr = 127.0.0.1
public network = 127.0.0.0/8
ms bind msgr1 = false
ms bind ipv6 = false
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
auth allow insecure global id reclaim = false
keyring = ${dir}/keyring
run dir = ${dir}/run
admin socket = ${dir}/run/$name.asok
pid file = ${dir}/run/$name.pid
log file = ${dir}/log/$name.log
log to stderr = false
err to stderr = true
crash dir = ${dir}/crash
mon data = ${dir}/mon/$name
mgr data = ${dir}/mgr/$name
osd data = ${dir}/osd/$id
rgw data = ${dir}/rgw/$name
mon cluster log file = default=${dir}/log/cluster.$channel.log cluster=${dir}/log/cluster.log
# Propose each change at once (default: gather them for 1 s): the start takes 3 s instead of 14 s.
paxos propose interval = 0.05
mon data avail warn = 1
mon data avail crit = 0
mon allow pool delete = true
mon allow pool size one = true
mon warn on pool no redundancy = false
mon warn on insecure global id reclaim allowed = false
osd objectstore = memstore
memstore device bytes = ${o.osdBytes}
osd pool default size = ${size}
osd pool default min size = ${minSize}
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 1
osd max object name len = 460
osd max object namespace len = 64

[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:${o.rgwPort}
rgw thread pool size = 32
# Lifecycle rules are kept but not run: its workers hold a stop for ~5 s.
rgw enable lc threads = false
`;
}

/** A GET on a connection of its own (closed after), within 2 s. */
function getOnce(port: number, path: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers, agent: false, timeout: 2000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('no answer in 2 s')));
    req.on('error', reject);
  });
}

/** A command run to its end, within `ms`; rejects with its stderr if it fails. */
function run(cmd: string, args: string[], ms: number, cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, timeout: Math.max(1000, ms), killSignal: 'SIGKILL', maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) {
        const why = err.killed ? `did not finish in ${Math.round(Math.max(1000, ms) / 1000)} s` : `failed (${err.code ?? err.signal})`;
        reject(new Error(`\`${cmd} ${args.join(' ')}\` ${why}\n${String(stderr).trim().split('\n').slice(-15).join('\n')}`));
      } else resolve(String(stdout));
    });
  });
}

/** Starts a cluster and radosgw, with a user; rejects (having stopped what it started) if any step fails. */
export async function startRgw(o: RgwOptions = {}): Promise<Rgw> {
  const osds = o.osds ?? 3;
  const mgr = o.mgr ?? false;
  if (!Number.isInteger(osds) || osds < 1) throw new Error(`startRgw: osds must be a whole number ≥ 1, not ${osds}`);
  const missing = missingPrograms(mgr);
  if (missing.length > 0) {
    throw new Error(`startRgw: Ceph's RADOS Gateway is not installed (missing package${missing.length > 1 ? 's' : ''} ${missing.join(', ')}); install it with: ${RGW_INSTALL}`);
  }
  endOrphans();
  onExitEndAll();

  const deadline = Date.now() + (o.timeoutMs ?? 90_000);
  const left = () => deadline - Date.now();
  const dir = mkdtempSync(join(tmpdir(), DIR_PREFIX));
  for (const sub of ['run', 'log', 'mon', 'mgr', 'osd', 'rgw', 'crash']) mkdirSync(join(dir, sub));
  const cfg = join(dir, 'ceph.conf');
  const daemons: Daemon[] = [];
  const record = { dir, pids: () => daemons.filter(alive).map((d) => d.child.pid!).filter(Boolean) };
  running.add(record);
  writeFileSync(join(dir, 'owner'), String(process.pid));
  const fsid = randomUUID();
  const [monPort, rgwPort] = await Promise.all([freePort(), freePort()]);
  writeFileSync(cfg, conf({ dir, fsid, monPort, rgwPort, osds, osdBytes: o.osdBytes ?? 2 * 1024 ** 3 }));

  let stepName = 'writing the config';
  const t0 = Date.now();
  /** The step under way, for a failure's message; each is noted with its start in log/steps.log. */
  const step = (name: string) => {
    stepName = name;
    appendFileSync(join(dir, 'log', 'steps.log'), `${((Date.now() - t0) / 1000).toFixed(2)} s: ${name}\n`);
    return name;
  };
  let started = false;
  let stopping = false;
  /** Rejects when a daemon exits before the start is done (a CLI step would otherwise wait out its timeout). */
  let died!: (e: Error) => void;
  const death = new Promise<never>((_, reject) => (died = reject));
  death.catch(() => {});
  const guard = <T>(p: Promise<T>): Promise<T> => Promise.race([p, death]);
  /** A step's time: what is left of the start's deadline, or `after` once started. */
  const budget = (after: number) => (started ? after : Math.min(after, left()));
  const cli = (cmd: string, args: string[], ms: number) => run(cmd, ['-c', cfg, ...args], ms, dir);
  const ceph = (...args: string[]) => cli('/usr/bin/ceph', ['--connect-timeout', String(Math.max(1, Math.floor(budget(30_000) / 1000))), ...args], budget(30_000));

  function daemon(name: string, program: string, args: string[]): Daemon {
    const log = join(dir, 'log', `${name}.out`);
    const fd = openSync(log, 'a');
    const child = spawn(`/usr/bin/${program}`, ['-c', cfg, ...args, '-f'], { cwd: dir, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    const d: Daemon = { name, child, exited: new Promise<void>((r) => child.once('exit', () => r())), log: join(dir, 'log', `${name}.log`) };
    child.once('error', () => {}); // an exit follows, and is what is watched
    child.unref(); // a process that forgets stop() may still exit: its exit handler then kills the daemons
    child.once('exit', () => {
      if (!started && !stopping) died(deathOf(d));
    });
    daemons.push(d);
    if (child.pid) appendFileSync(join(dir, 'pids'), `${child.pid}\n`);
    return d;
  }

  function deathOf(d: Daemon): Error {
    const out = tail(join(dir, 'log', `${d.name}.out`), 10);
    return new Error(`${d.name} exited (${d.child.exitCode ?? d.child.signalCode})\n--- ${d.log} ---\n${tail(d.log)}\n--- its output ---\n${out}`);
  }

  /** Polls `test` until it answers true; any other answer (or error) is the state a timeout reports. */
  async function waitFor(_step: string, test: () => Promise<true | string>, every = 100): Promise<void> {
    let last = 'no answer yet';
    for (;;) {
      const r = await guard(test().catch((e: unknown) => (e instanceof Error ? e.message : String(e))));
      if (r === true) return;
      last = r;
      if (left() <= 0) throw new Error(`timed out (last: ${last})`);
      await guard(sleep(every));
    }
  }

  /** Each daemon stops in well under a second; one that has not in 10 s is killed. */
  const GRACE_MS = 10_000;
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= stopAll());
  async function stopAll(): Promise<void> {
    stopping = true;
    // radosgw first, then the OSDs (they may still be peering), the manager, the monitor last.
    const order = [
      daemons.filter((d) => d.name === 'client.rgw'),
      daemons.filter((d) => d.name.startsWith('osd.')),
      daemons.filter((d) => d.name.startsWith('mgr.')),
      daemons.filter((d) => d.name.startsWith('mon.')),
    ];
    for (const group of order) {
      await Promise.all(group.map(async (d) => {
        if (!alive(d)) return;
        d.child.kill('SIGTERM');
        let timer: NodeJS.Timeout | undefined;
        const clean = await Promise.race([d.exited.then(() => true), new Promise<false>((r) => (timer = setTimeout(() => r(false), GRACE_MS)))]);
        clearTimeout(timer);
        if (!clean && alive(d)) {
          d.child.kill('SIGKILL');
          await d.exited;
        }
      }));
    }
    running.delete(record);
    if (!keepDirs()) rmSync(dir, { recursive: true, force: true });
  }

  const logsOf = (names: string[]) => names.map((n) => `--- log/${n} ---\n${tail(join(dir, 'log', n), 20)}`).join('\n');
  let relevantLogs = ['mon.a.log'];
  try {
    step('making the keyring (ceph-authtool)');
    const keyring = join(dir, 'keyring');
    const auth = (...args: string[]) => guard(run('/usr/bin/ceph-authtool', [keyring, ...args], left(), dir));
    await auth('--create-keyring', '--gen-key', '-n', 'mon.', '--cap', 'mon', 'allow *');
    await auth('--gen-key', '-n', 'client.admin', '--cap', 'mon', 'allow *', '--cap', 'osd', 'allow *', '--cap', 'mgr', 'allow *', '--cap', 'mds', 'allow *');
    await auth('--gen-key', '-n', 'client.rgw', '--cap', 'mon', 'allow rw', '--cap', 'osd', 'allow rwx', '--cap', 'mgr', 'allow rw');
    if (mgr) await auth('--gen-key', '-n', 'mgr.x', '--cap', 'mon', 'allow profile mgr', '--cap', 'osd', 'allow *', '--cap', 'mds', 'allow *');
    for (let i = 0; i < osds; i++) {
      await auth('--gen-key', '-n', `osd.${i}`, '--cap', 'mon', 'allow profile osd', '--cap', 'mgr', 'allow profile osd', '--cap', 'osd', 'allow *');
    }

    step('making the monitor (monmaptool, ceph-mon --mkfs)');
    await run('/usr/bin/monmaptool', ['--create', '--fsid', fsid, '--addv', 'a', `[v2:127.0.0.1:${monPort}]`, join(dir, 'monmap')], left(), dir);
    // mkfs takes every key of the keyring into the monitor's auth database.
    await cli('/usr/bin/ceph-mon', ['--mkfs', '-i', 'a', '--monmap', join(dir, 'monmap'), '--keyring', keyring], left());
    step(`starting the monitor on 127.0.0.1:${monPort}`);
    daemon('mon.a', 'ceph-mon', ['-i', 'a']);
    if (mgr) daemon('mgr.x', 'ceph-mgr', ['-i', 'x']);

    for (let i = 0; i < osds; i++) {
      step(`adding osd.${i} (ceph osd new, ceph-osd --mkfs)`);
      relevantLogs = ['mon.a.log', `osd.${i}.log`];
      const uuid = randomUUID();
      const id = (await guard(ceph('osd', 'new', uuid, String(i)))).trim();
      if (id !== String(i)) throw new Error(`ceph osd new answered id ${JSON.stringify(id)}, not ${i}`);
      mkdirSync(join(dir, 'osd', id));
      await guard(cli('/usr/bin/ceph-osd', ['-i', id, '--mkfs', '--osd-uuid', uuid], left()));
      // Each OSD in its own host: CRUSH's default rule puts each copy in another host.
      daemon(`osd.${i}`, 'ceph-osd', ['-i', id, '--crush-location', `root=default host=h${i}`]);
    }
    relevantLogs = ['mon.a.log', ...Array.from({ length: osds }, (_, i) => `osd.${i}.log`)];
    await waitFor(step(`waiting for ${osds} OSDs to be up and in`), async () => {
      const s = JSON.parse(await ceph('osd', 'stat', '--format', 'json')) as { num_up_osds: number; num_in_osds: number };
      return (s.num_up_osds === osds && s.num_in_osds === osds) || `${s.num_up_osds} up, ${s.num_in_osds} in`;
    }, 250);

    // The user first: radosgw-admin makes the zone's pools, and a signed answer from the port
    // then proves that it is this cluster's radosgw that listens there.
    step('making the S3 user (radosgw-admin user create)');
    relevantLogs = ['client.admin.log', 'mon.a.log'];
    const user = await guard(createUser('tester'));

    step(`starting radosgw on 127.0.0.1:${rgwPort}`);
    relevantLogs = ['client.rgw.log', 'client.rgw.out'];
    daemon('client.rgw', 'radosgw', ['-n', 'client.rgw']);
    const endpoint = `http://127.0.0.1:${rgwPort}`;
    await waitFor(step(`waiting for radosgw to answer a signed ListBuckets at ${endpoint}`), async () => {
      const headers = await signedHeaders('GET', `${endpoint}/`, undefined, { creds: user, region: 'us-east-1' });
      const r = await getOnce(rgwPort, '/', Object.fromEntries(headers));
      return (r.status === 200 && r.text.includes('<ListAllMyBucketsResult')) || `${r.status} ${r.text.slice(0, 200)}`;
    });

    async function createUser(uid: string, keys: { accessKeyId?: string; secretAccessKey?: string } = {}): Promise<RgwUser> {
      const accessKeyId = keys.accessKeyId ?? `RGW${randomBytes(9).toString('hex').toUpperCase()}`;
      const secretAccessKey = keys.secretAccessKey ?? randomBytes(30).toString('base64url');
      await cli('/usr/bin/radosgw-admin', ['user', 'create', '--uid', uid, '--display-name', uid, '--access-key', accessKeyId, '--secret', secretAccessKey], budget(60_000));
      return { uid, accessKeyId, secretAccessKey };
    }

    step('started');
    started = true;
    return {
      endpoint,
      port: rgwPort,
      region: 'us-east-1',
      accessKeyId: user.accessKeyId,
      secretAccessKey: user.secretAccessKey,
      dir,
      createUser,
      admin: (...args) => run('/usr/bin/radosgw-admin', ['-c', cfg, ...args], 60_000, dir),
      ceph: (...args) => run('/usr/bin/ceph', ['-c', cfg, '--connect-timeout', '10', ...args], 30_000, dir),
      logTail: (name = 'client.rgw.log', lines = 30) => tail(join(dir, 'log', name), lines),
      stop,
    };
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    const logs = logsOf(relevantLogs);
    await stop().catch(() => {});
    throw new Error(`startRgw: ${stepName} failed: ${why}\n${logs}\n(the cluster's directory was ${dir}${keepDirs() ? ', kept' : '; SWBUCKET_KEEP_RGW=1 keeps it'})`);
  }
}
