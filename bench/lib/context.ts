// What every figure gets: the environment and a progress printer.
import type { Env } from './env.ts';

export interface Ctx {
  env: Env;
  /** One progress line, prefixed with the time since the run started. */
  log(line: string): void;
  /** The bucket on the swbucket side (created once). */
  bucket: string;
}
