// One small page interface over three browser engines, so a test file runs unchanged in Chromium
// (playwright-core), Firefox ESR (puppeteer-core over WebDriver BiDi) and WebKitGTK (WebKitWebDriver
// through selenium-webdriver, under an Xvfb of its own). The vitest projects 'browser', 'firefox',
// 'webkit' and 'webkit-disk' provide the engine's name; a test reads it with inject('engine').
//
// Every page of one Engine shares that engine's storage (one profile, one context, one automation
// session); each launch starts from empty storage, unless it is given the profileDir of an earlier
// one. Values cross into and out of evaluate() as JSON.
import { launchChromiumEngine, checkChromium } from './engines/chromium.ts';
import { launchFirefoxEngine, checkFirefox } from './engines/firefox.ts';
import { launchWebKitEngine, checkWebKit } from './engines/webkit.ts';

export type EngineName = 'chromium' | 'firefox' | 'webkit' | 'webkit-disk';
export const ENGINE_NAMES: readonly EngineName[] = ['chromium', 'firefox', 'webkit', 'webkit-disk'];

export interface LaunchOptions {
  /**
   * Milliseconds after which evaluate() rejects (60 s, the browser projects' testTimeout, when not
   * given). WebDriver runs one script at a time, so in WebKit a script that never settles would
   * otherwise hold up every later command of the engine, and every later test with them.
   */
  evaluateTimeout?: number;
  /**
   * Firefox only (the other engines ignore it): prefs for its profile on top of FIREFOX_PREFS, e.g.
   * a short dom.serviceWorkers.idle_timeout, so that Firefox itself stops its service workers.
   */
  firefoxPrefs?: Record<string, unknown>;
  /**
   * The engine's storage (Chromium's user data, Firefox's profile, webkit-disk's data folder) in this
   * folder, made when missing and left in place by close(): a later launch with the same folder starts
   * with that storage, as a browser its user quit and started again. Not 'webkit', whose automation
   * session keeps its storage in memory: a launch of it with a profileDir is refused.
   */
  profileDir?: string;
}
export const EVALUATE_TIMEOUT_MS = 60_000;

/** A running browser. */
export interface Engine {
  readonly name: EngineName;
  /** What runs, for messages: e.g. "Chromium 140.0.7339.185", "Firefox 153.7.0", "WebKitGTK 2.50.6 (MiniBrowser)". */
  readonly version: string;
  /** A new tab (window in WebKit) sharing this engine's storage, at about:blank. */
  newPage(): Promise<EnginePage>;
  /** Ends the browser and everything started for it (driver, X server, profile or data folder). */
  close(): Promise<void>;
}

/** Rejects with "evaluate: no result within N ms" when `p` has not settled by then. */
export function evaluateWithin<T>(p: Promise<T>, ms: number | undefined): Promise<T> {
  if (ms === undefined) return p;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`evaluate: no result within ${ms} ms`)), ms);
    p.then((v) => {
      clearTimeout(timer);
      resolve(v);
    }, (e: unknown) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

export interface WaitOptions {
  /** Milliseconds; 20 s when not given. */
  timeout?: number;
}

/** A page, whatever drives it. */
export interface EnginePage {
  readonly engine: EngineName;
  /** Navigates and waits for the load event. */
  goto(url: string): Promise<void>;
  url(): Promise<string>;
  /**
   * Runs `fn` in the page (its source text: it must not reference anything outside itself) with `arg`,
   * and resolves with what it returned or resolved to. `arg` and the result must be JSON values.
   * A throw or rejection in the page rejects here with an Error whose message includes the page's message;
   * so does a result not settled within the engine's evaluateTimeout (LaunchOptions).
   */
  evaluate<R>(fn: () => R | Promise<R>): Promise<R>;
  evaluate<A, R>(fn: (arg: A) => R | Promise<R>, arg: A): Promise<R>;
  /** Resolves once `fn(arg)` is truthy in the page; rejects after `timeout`. */
  waitForFunction<A>(fn: (arg: A) => unknown, arg?: A, options?: WaitOptions): Promise<void>;
  /** Reloads and waits for the load event. */
  reload(): Promise<void>;
  /**
   * The frames of the top document (its child frames, in document order): each one's URL and its
   * document's text, read by the driver, which sees into a frame that the page itself may not (one
   * of another origin, or of an opaque one such as a sandboxed document).
   */
  frames(): Promise<FrameContent[]>;
  close(): Promise<void>;
}

/** What EnginePage.frames() reads of a frame. */
export interface FrameContent {
  url: string;
  /** `document.documentElement.textContent` of the frame's document ('' when it has none). */
  text: string;
}

/** Throws, naming what to install, when `name` cannot be launched on this machine. */
export async function checkEngine(name: EngineName): Promise<void> {
  switch (name) {
    case 'chromium': return checkChromium();
    case 'firefox': return checkFirefox();
    case 'webkit': return checkWebKit(false);
    case 'webkit-disk': return checkWebKit(true);
    default: throw new Error(`unknown engine "${String(name)}": one of ${ENGINE_NAMES.join(', ')}`);
  }
}

export function launchEngine(name: EngineName, options: LaunchOptions = {}): Promise<Engine> {
  const evaluateTimeout = options.evaluateTimeout ?? EVALUATE_TIMEOUT_MS;
  switch (name) {
    case 'chromium': return launchChromiumEngine({ evaluateTimeout, profileDir: options.profileDir });
    case 'firefox': return launchFirefoxEngine({ evaluateTimeout, prefs: options.firefoxPrefs, profileDir: options.profileDir });
    case 'webkit':
      if (options.profileDir !== undefined) return Promise.reject(new Error('webkit keeps its storage in memory (MiniBrowser\'s automation session): no profileDir; use webkit-disk'));
      return launchWebKitEngine({ disk: false, evaluateTimeout });
    case 'webkit-disk': return launchWebKitEngine({ disk: true, evaluateTimeout, dataDir: options.profileDir });
    default: return Promise.reject(new Error(`unknown engine "${String(name)}": one of ${ENGINE_NAMES.join(', ')}`));
  }
}
