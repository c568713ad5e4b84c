// WebKitGTK through WebKitWebDriver, driven with selenium-webdriver's W3C client. MiniBrowser has no
// headless mode, so each launch starts its own Xvfb and gives its display to the driver (and so to
// the browser the driver starts).
//
// 'webkit': MiniBrowser --automation. Its automation session keeps website data in memory, like a
//   private window (IndexedDB there refuses Blobs: "Error preparing Blob/File data to be stored in
//   object store").
// 'webkit-disk': webkit-launcher.py beside this file in MiniBrowser's place: the same WebKitGTK with
//   its website data (IndexedDB, service workers, caches) in a temporary folder on disk.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Builder, type WebDriver } from 'selenium-webdriver';
import type { Engine, EnginePage, FrameContent, WaitOptions } from '../engines.ts';
import { findExecutable, notExecutable } from './find.ts';
import { findXvfb, killOnExit, startXvfb, stopProcess } from './xvfb.ts';

const INSTALL = 'apt-get install webkit2gtk-driver xvfb';
const INSTALL_DISK = 'apt-get install webkit2gtk-driver xvfb gir1.2-webkit2-4.1 python3-gi';

export const WEBKIT_LAUNCHER = fileURLToPath(new URL('./webkit-launcher.py', import.meta.url));
/** The name webkit-launcher.py gives the automation session (browserName). */
const LAUNCHER_NAME = 'swbucket-webkit';

export function findWebKitWebDriver(): string {
  return findExecutable({
    what: 'WebKitWebDriver (WebKitGTK\'s WebDriver)',
    envVar: 'WEBKIT_WEBDRIVER_PATH',
    paths: ['/usr/bin/WebKitWebDriver'],
    commands: ['WebKitWebDriver'],
    install: INSTALL,
  });
}

/** MiniBrowser ships in libwebkit2gtk-4.1-0 under /usr/lib/<multiarch>/webkit2gtk-4.1/. */
export function findMiniBrowser(): string {
  const paths = ['/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser'];
  try {
    for (const d of readdirSync('/usr/lib')) paths.push(join('/usr/lib', d, 'webkit2gtk-4.1', 'MiniBrowser'));
  } catch {
    // no /usr/lib
  }
  try {
    const listed = execFileSync('dpkg', ['-L', 'libwebkit2gtk-4.1-0'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    paths.push(...listed.split('\n').filter((l) => l.endsWith('/MiniBrowser')));
  } catch {
    // not Debian, or the package is missing
  }
  return findExecutable({ what: 'MiniBrowser (WebKitGTK\'s test browser)', envVar: 'MINIBROWSER_PATH', paths, install: INSTALL });
}

/** The launcher runs: Python 3 with GObject introspection for WebKit2 4.1 and GTK 3. */
function checkLauncher(): void {
  const why = notExecutable(WEBKIT_LAUNCHER);
  if (why) throw new Error(`${WEBKIT_LAUNCHER} cannot run: ${why}`);
  try {
    execFileSync(WEBKIT_LAUNCHER, ['--version'], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 20_000 });
  } catch (e) {
    const stderr = String((e as { stderr?: Buffer }).stderr ?? '').trim().split('\n').slice(-3).join('\n');
    throw new Error(`The webkit-disk engine runs ${WEBKIT_LAUNCHER} with /usr/bin/python3 and PyGObject's WebKit2 4.1, `
      + `which failed${stderr ? `:\n${stderr}\n` : '. '}Install them: ${INSTALL_DISK}`);
  }
}

export async function checkWebKit(disk: boolean): Promise<void> {
  findWebKitWebDriver();
  findXvfb();
  if (disk) checkLauncher();
  else findMiniBrowser();
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function waitReady(url: string, exited: () => string | null, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const gone = exited();
    if (gone) throw new Error(gone);
    try {
      const r = await fetch(url + '/status');
      if (r.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > until) throw new Error(`WebKitWebDriver did not answer ${url}/status within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** What the page's wrapper hands back to the driver. */
type Outcome = { ok: true; json?: string } | { ok: false; name: string; message: string; stack?: string };

/**
 * The function's source text inside an async script: the driver's callback (the last argument)
 * gets {ok, json} or {ok: false, name, message}, so a throw in the page keeps its message instead of
 * becoming the driver's generic "script error". The argument goes in as JSON text.
 */
function asyncScript(source: string): string {
  return `var done = arguments[arguments.length - 1];
var argJson = arguments[0];
new Promise(function (resolve) {
  var fn = (${source});
  resolve(argJson === null ? fn() : fn(JSON.parse(argJson)));
}).then(function (value) {
  try {
    done(value === undefined ? { ok: true } : { ok: true, json: JSON.stringify(value) });
  } catch (e) {
    done({ ok: false, name: 'TypeError', message: 'the result cannot be sent back as JSON: ' + e });
  }
}, function (e) {
  var isError = e !== null && typeof e === 'object' && 'message' in e;
  done({ ok: false, name: isError ? String(e.name) : 'thrown', message: isError ? String(e.message) : String(e), stack: isError && e.stack ? String(e.stack) : undefined });
});`;
}

/** Page-side evaluation errors, with the page's name and message in the message. */
export class PageError extends Error {
  constructor(readonly pageName: string, readonly pageMessage: string, pageStack?: string) {
    super(`${pageName}: ${pageMessage}`);
    this.name = 'PageError';
    if (pageStack) this.stack = `${this.name}: ${this.message}\n    in the page:\n${pageStack}`;
  }
}

/** `dataDir` (webkit-disk): the data folder to use and leave in place on close, instead of a temporary one. */
export async function launchWebKitEngine({ disk, evaluateTimeout = 60_000, dataDir: keptDir }: { disk: boolean; evaluateTimeout?: number; dataDir?: string }): Promise<Engine> {
  const name = disk ? 'webkit-disk' : 'webkit';
  const driverPath = findWebKitWebDriver();
  let binary: string;
  let args: string[];
  let dataDir: string | undefined;
  if (disk) {
    checkLauncher();
    dataDir = keptDir ?? mkdtempSync(join(tmpdir(), 'swbucket-webkit-'));
    binary = WEBKIT_LAUNCHER;
    args = ['--automation', `--data-dir=${dataDir}`];
  } else {
    binary = findMiniBrowser();
    args = ['--automation'];
  }

  const cleanups: (() => Promise<void> | void)[] = [];
  const cleanup = async () => {
    for (const c of cleanups.splice(0).reverse()) {
      try {
        await c();
      } catch {
        // keep cleaning
      }
    }
  };
  if (dataDir && keptDir === undefined) cleanups.push(() => rmSync(dataDir!, { recursive: true, force: true }));
  try {
    const xvfb = await startXvfb();
    cleanups.push(() => xvfb.stop());
    const port = await freePort();
    // Its own process group, so stopping it also stops the browser it started.
    const child = spawn(driverPath, [`--port=${port}`], {
      env: { ...process.env, DISPLAY: xvfb.display, NO_AT_BRIDGE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    const keep = (d: Buffer) => {
      output = (output + d.toString()).slice(-4000);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    let spawnError: Error | undefined;
    child.once('error', (e) => (spawnError = e));
    killOnExit(child, { group: true });
    cleanups.push(() => stopProcess(child, { group: true }));
    const server = `http://127.0.0.1:${port}`;
    await waitReady(server, () => spawnError ? `WebKitWebDriver could not start: ${spawnError.message}`
      : child.exitCode !== null || child.signalCode !== null ? `WebKitWebDriver exited (${child.exitCode ?? child.signalCode}):\n${output}` : null);

    let driver: WebDriver;
    try {
      driver = await new Builder().usingServer(server).withCapabilities({
        browserName: disk ? LAUNCHER_NAME : 'MiniBrowser',
        'webkitgtk:browserOptions': { binary, args },
      }).build();
    } catch (e) {
      throw new Error(`WebKitWebDriver could not start ${binary}: ${(e as Error).message}\n${output}`);
    }
    cleanups.push(() => withTimeout(driver.quit(), 10_000).catch(() => undefined));
    // The driver gives up on a script after evaluateTimeout, so the next command can run.
    await driver.manage().setTimeouts({ script: evaluateTimeout, pageLoad: 60_000 });
    const caps = await driver.getCapabilities();
    const version = `WebKitGTK ${String(caps.get('browserVersion'))} (${disk ? 'webkit-launcher.py, storage on disk' : 'MiniBrowser, ephemeral storage'})`;

    // WebDriver drives one window at a time: every command goes through this queue, which switches
    // to the page's window first.
    let queue: Promise<unknown> = Promise.resolve();
    let current = await driver.getWindowHandle();
    let unused: string | undefined = current;
    let closed = false;
    const run = <T>(handle: string | null, op: () => Promise<T>): Promise<T> => {
      const next = queue.then(async () => {
        if (closed) throw new Error(`${name}: the engine is closed`);
        if (handle !== null && current !== handle) {
          await driver.switchTo().window(handle);
          current = handle;
        }
        return op();
      });
      queue = next.catch(() => undefined);
      return next;
    };

    const evaluateIn = async <R>(handle: string, source: string, arg: unknown): Promise<R> => {
      const outcome = await run(handle, () => driver.executeAsyncScript<Outcome>(asyncScript(source), arg === undefined ? null : JSON.stringify(arg)))
        .catch((e: Error) => {
          throw e.name === 'ScriptTimeoutError' ? new Error(`evaluate: no result within ${evaluateTimeout} ms`) : e;
        });
      if (!outcome.ok) throw new PageError(outcome.name, outcome.message, outcome.stack);
      return (outcome.json === undefined ? undefined : JSON.parse(outcome.json)) as R;
    };

    const page = (handle: string): EnginePage => ({
      engine: name,
      goto: (url: string) => run(handle, () => driver.get(url)),
      url: () => run(handle, () => driver.getCurrentUrl()),
      evaluate<A, R>(fn: (arg: A) => R | Promise<R>, arg?: A): Promise<R> {
        return evaluateIn<R>(handle, fn.toString(), arg);
      },
      async waitForFunction<A>(fn: (arg: A) => unknown, arg?: A, options: WaitOptions = {}) {
        const timeout = options.timeout ?? 20_000;
        const until = Date.now() + timeout;
        const test = `async function (a) { return Boolean(await (${fn.toString()})(a)); }`;
        let lastError: unknown;
        for (;;) {
          try {
            if (await evaluateIn<boolean>(handle, test, arg)) return;
          } catch (e) {
            lastError = e; // e.g. while the page navigates
          }
          if (Date.now() > until) {
            throw new Error(`waitForFunction: not true within ${timeout} ms: ${fn.toString().slice(0, 200)}`
              + (lastError ? `\nlast error: ${(lastError as Error).message}` : ''));
          }
          await new Promise((r) => setTimeout(r, 100));
        }
      },
      reload: () => run(handle, () => driver.navigate().refresh()),
      frames: () => run(handle, async () => {
        // WebDriver looks into one frame at a time: switch into each, then back to the top.
        const count = await driver.executeScript<number>('return window.frames.length;');
        const out: FrameContent[] = [];
        try {
          for (let i = 0; i < count; i++) {
            await driver.switchTo().frame(i);
            // (The driver's current URL stays the top document's.)
            out.push(await driver.executeScript<FrameContent>('return { url: location.href, text: document.documentElement ? document.documentElement.textContent : "" };'));
            await driver.switchTo().defaultContent();
          }
        } finally {
          await driver.switchTo().defaultContent();
        }
        return out;
      }),
      close: () => run(handle, async () => {
        await driver.close();
        current = '';
      }),
    });

    return {
      name,
      version,
      async newPage() {
        if (unused) {
          const handle = unused;
          unused = undefined;
          return page(handle);
        }
        const handle = await run(null, async () => {
          if (!current) {
            // The current window was closed: new windows are opened from one that is still open.
            const open = await driver.getAllWindowHandles();
            if (open[0]) await driver.switchTo().window(open[0]);
          }
          await driver.switchTo().newWindow('window');
          current = await driver.getWindowHandle();
          return current;
        });
        return page(handle);
      },
      async close() {
        closed = true;
        await cleanup();
      },
    };
  } catch (e) {
    await cleanup();
    throw e;
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    p.then((v) => {
      clearTimeout(t);
      resolve(v);
    }, (e) => {
      clearTimeout(t);
      reject(e);
    });
  });
}
