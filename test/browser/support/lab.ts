// A lab page of an app's own beside the built site: the package's root entry (src/index.ts)
// bundled as the package build bundles it, the client's real hashing worker inlined, exposing the
// named exports on `window[global]`. (The built site's own page starts the console, so it cannot
// be the page under test.)
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { inlineHashWorker } from '../../../scripts/bundles.ts';
import { launchChromium } from './chromium.ts';
import { startStaticServer, type StaticServer } from './static-server.ts';

/** The lab page: it loads the bundle served as /lab.js. */
export const LAB_HTML = '<!doctype html><meta charset="utf-8"><title>swbucket lab</title><script src="/lab.js"></script><body>lab</body>\n';

export async function bundleLab(global: string, exports: string[]): Promise<string> {
  const out = await build({
    stdin: {
      contents: `import { ${exports.join(', ')} } from './src/index.ts';\nwindow.${global} = { ${exports.join(', ')} };\n`,
      resolveDir: process.cwd(),
      sourcefile: 'lab-entry.ts',
      loader: 'ts',
    },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'chrome110',
    write: false,
    plugins: [inlineHashWorker()],
    logLevel: 'warning',
  });
  return out.outputFiles[0]!.text;
}

/** A browser, and the built site serving the lab page (/lab.html) with `exports` on `window[global]`. */
export async function startLab(global: string, exports: string[]): Promise<{ browser: Browser; site: StaticServer }> {
  const [browser, site, bundle] = await Promise.all([launchChromium(), startStaticServer(), bundleLab(global, exports)]);
  site.bodies.set('/lab.js', bundle);
  site.bodies.set('/lab.html', LAB_HTML);
  return { browser, site };
}
