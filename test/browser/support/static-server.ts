// A static server for the built site with per-path overrides, for tests that need what vite
// preview cannot give: a Content-Security-Policy on the worker script, or a new build of the
// worker swapped in at the same URL. Serves dist-site/ (run after the browser global setup built it).
import { createServer, type Server } from 'node:http';
import { cpSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import type { AddressInfo } from 'node:net';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml',
  '.png': 'image/png', '.json': 'application/json', '.wasm': 'application/wasm',
};

export interface StaticServer {
  /** e.g. http://localhost:43123 */
  url: string;
  /** Extra headers for one path, e.g. '/sw.js' → { 'content-security-policy': "script-src 'self'" }. */
  headers: Map<string, Record<string, string>>;
  /** Body served instead of the file at a path (set to undefined to go back to the file). */
  bodies: Map<string, string | Uint8Array>;
  close(): Promise<void>;
}

export async function startStaticServer(root = join(process.cwd(), 'dist-site')): Promise<StaticServer> {
  const headers = new Map<string, Record<string, string>>();
  const bodies = new Map<string, string | Uint8Array>();
  const server: Server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const file = path === '/' ? '/index.html' : path;
    const extra = headers.get(path) ?? headers.get(file) ?? {};
    const override = bodies.get(file);
    try {
      const body = override ?? (await readFile(join(root, normalize(file).replace(/^(\.\.[/\\])+/, ''))));
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-cache', ...extra });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, 'localhost', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://localhost:${port}`,
    headers,
    bodies,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/**
 * A copy of dist-site/ in a new temporary folder (remove it after the file's tests), so that a test
 * serving the site is not touched by a build of another project's global setup replacing dist-site/.
 */
export function copyBuiltSite(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  for (let attempt = 0; ; attempt++) {
    rmSync(dir, { recursive: true, force: true });
    cpSync('dist-site', dir, { recursive: true });
    const ok = ['index.html', 'sw.js'].every((f) => existsSync(join(dir, f)) && statSync(join(dir, f)).size > 0);
    if (ok) return dir;
    if (attempt === 5) throw new Error('dist-site/ has no index.html and sw.js (the browser global setup builds it)');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000);
  }
}
