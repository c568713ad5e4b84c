// Finding the programs an engine needs: an environment variable when set (an error, never another
// program, when it names no executable file), else the first executable of a list of usual places
// and of PATH, else an error that says what to install.
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Why `path` cannot be run, or null when it is an executable file. */
export function notExecutable(path: string): string | null {
  try {
    if (!statSync(path).isFile()) return 'it is not a file';
  } catch {
    return 'nothing is there';
  }
  try {
    accessSync(path, constants.X_OK);
  } catch {
    return 'it is not executable';
  }
  return null;
}

/** `command -v name`: the first executable `name` on PATH. */
export function onPath(name: string, env: Record<string, string | undefined> = process.env): string | null {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (notExecutable(candidate) === null) return candidate;
  }
  return null;
}

export interface Wanted {
  /** What it is, for messages: "Firefox", "WebKitWebDriver". */
  what: string;
  /** The environment variable that overrides the search. */
  envVar?: string;
  /** Absolute paths to try first. */
  paths?: string[];
  /** Names to look up on PATH after them. */
  commands?: string[];
  /** What to install, e.g. "apt-get install firefox-esr". */
  install: string;
}

export function findExecutable(w: Wanted, env: Record<string, string | undefined> = process.env): string {
  const given = w.envVar ? env[w.envVar] : undefined;
  if (given) {
    const why = notExecutable(given);
    if (why === null) return given;
    throw new Error(`${w.envVar} is set to "${given}", but ${why}: it must name the ${w.what} to run. `
      + `Fix or unset ${w.envVar}; to install it: ${w.install}`);
  }
  for (const p of w.paths ?? []) if (notExecutable(p) === null) return p;
  for (const c of w.commands ?? []) {
    const found = onPath(c, env);
    if (found) return found;
  }
  throw new Error(`The browser tests need ${w.what} and none was found. Install it: ${w.install}`
    + (w.envVar ? ` (or point ${w.envVar} at it)` : ''));
}
