// A lab page of an app's own beside the built site: the package's root entry (src/index.ts)
// bundled as the package build bundles it, the client's real hashing worker inlined, exposing the
// named exports on `window[global]`. (The built site's own page starts the console, so it cannot
// be the page under test.)
import { build } from 'esbuild';
import { inlineHashWorker } from '../../../scripts/bundles.ts';

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
