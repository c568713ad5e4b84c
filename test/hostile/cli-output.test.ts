// Issue 23, F1 and F8: `swbucket export` writes only where it was told. Against a hostile endpoint
// whose export answer names a file outside the working folder (`../x.tar`, an absolute path, a
// backslash path, a dot name), the CLI writes a plain name in the working folder and nothing
// elsewhere; a symbolic link planted at the temporary name an earlier version used (FILE.partial)
// or at FILE itself is never written through; an existing FILE is replaced only with --force.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import http from 'node:http';
import { execFile } from 'node:child_process';
import { lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { tempDir } from '../support/stores.ts';

const ROOT = join(import.meta.dirname, '../..');
const BODY = Buffer.alloc(1024, 0x61);
/** tsx's loader by its path: the CLI runs in folders that have no node_modules. */
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;

/** A server that answers every request as an export whose file name is `name`. */
let name = 'x.tar';
let server: http.Server;
let endpoint: string;
beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    res.writeHead(200, {
      'content-type': 'application/x-tar',
      'content-disposition': `attachment; filename="${name}"`,
      'x-svc-archive-objects': '1',
      'x-svc-archive-object-bytes': String(BODY.length),
      'content-length': String(BODY.length),
    });
    res.end(BODY);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function cli(cwd: string, ...args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', TSX, join(ROOT, 'node/cli.ts'), 'export', '--endpoint', endpoint, ...args], { cwd, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, out: stdout + stderr });
    });
  });
}

describe('swbucket export against a hostile endpoint', () => {
  for (const [suggested, expected] of [
    ['../x.tar', 'x.tar'],
    ['../../escape.tar', 'escape.tar'],
    ['SUBDIR/../../abs.tar', 'abs.tar'],
    ['..\\win.tar', 'win.tar'],
    ['.hidden', 'hidden.tar'],
    ['..', 'swbucket.tar'],
  ] as const) {
    it(`a suggested name "${suggested}" becomes ${expected} in the working folder, nothing outside it`, async () => {
      const outer = tempDir();
      const cwd = join(outer, 'work');
      mkdirSync(cwd);
      name = suggested;
      const r = await cli(cwd);
      expect(r.code, r.out).toBe(0);
      expect(readdirSync(cwd)).toEqual([expected]);
      expect(readFileSync(join(cwd, expected))).toEqual(BODY);
      expect(readdirSync(outer)).toEqual(['work']);
    });
  }

  it('an absolute suggested name writes nothing there', async () => {
    const cwd = tempDir();
    const elsewhere = tempDir();
    name = join(elsewhere, 'abs.tar');
    const r = await cli(cwd);
    expect(r.code, r.out).toBe(0);
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(readdirSync(cwd)).toEqual(['abs.tar']);
  });

  it('-o FILE: a link planted at FILE.partial or at FILE is never written through; FILE is replaced only with --force', async () => {
    const cwd = tempDir();
    const victim = join(tempDir(), 'victim.txt');
    writeFileSync(victim, 'precious');
    name = 'x.tar';
    symlinkSync(victim, join(cwd, 'out.tar.partial'));
    let r = await cli(cwd, '-o', 'out.tar');
    expect(r.code, r.out).toBe(0);
    expect(readFileSync(join(cwd, 'out.tar'))).toEqual(BODY);
    expect(readFileSync(victim, 'utf8')).toBe('precious');

    // FILE exists: refused, unchanged, unless --force.
    writeFileSync(join(cwd, 'out.tar'), 'mine');
    r = await cli(cwd, '-o', 'out.tar');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/out\.tar exists: pass --force to replace it/);
    expect(readFileSync(join(cwd, 'out.tar'), 'utf8')).toBe('mine');
    r = await cli(cwd, '-o', 'out.tar', '--force');
    expect(r.code, r.out).toBe(0);
    expect(readFileSync(join(cwd, 'out.tar'))).toEqual(BODY);

    // FILE is a link: refused without --force; with it, the link itself is replaced, not its target.
    symlinkSync(victim, join(cwd, 'linked.tar'));
    r = await cli(cwd, '-o', 'linked.tar');
    expect(r.code).toBe(1);
    r = await cli(cwd, '-o', 'linked.tar', '--force');
    expect(r.code, r.out).toBe(0);
    expect(lstatSync(join(cwd, 'linked.tar')).isSymbolicLink()).toBe(false);
    expect(readFileSync(victim, 'utf8')).toBe('precious');
    // No temporary file is left behind.
    expect(readdirSync(cwd).sort()).toEqual(['linked.tar', 'out.tar', 'out.tar.partial']);
  });
});
