// The `swbucket` command: `init` puts the worker and the console into an app, `serve` runs the
// HTTP server.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { init, InitError } from './init.ts';
import { startServer } from './server.ts';
import { VERSION } from '../protocol/version.ts';

const USAGE = {
  init: `  swbucket init <publicDir> [--no-console] [--no-worker] [--force]
      Copy the service worker (<publicDir>/sw.js) and the console (<publicDir>/swbucket/)
      into your app's static folder (Vite: public). Run it again after upgrading swbucket.
      --no-worker: only the console (your own worker composes swbucket/sw); --no-console: only
      the worker; --force: replace files that are not swbucket's.`,
  serve: `  swbucket serve [--port 9000] [--host 127.0.0.1] [--endpoint svc.localhost]
      The same service as an HTTP server in Node (data in memory). PORT also sets the port.`,
};

const HELP = `swbucket ${VERSION}: object storage in the browser

Usage:
${USAGE.init}
${USAGE.serve}
  swbucket --version | --help
`;

/** The command's options, or its usage on --help and on anything it does not take. */
function parse<T extends ParseArgsConfig>(command: keyof typeof USAGE, config: T): ReturnType<typeof parseArgs<T>> {
  if (config.args?.includes('--help') || config.args?.includes('-h')) {
    console.log(`Usage:\n${USAGE[command]}`);
    process.exit(0);
  }
  try {
    return parseArgs(config);
  } catch (e) {
    return fail(`${e instanceof Error ? e.message : e}\n\nUsage:\n${USAGE[command]}`);
  }
}

function fail(message: string, code = 2): never {
  console.error(`swbucket: ${message}`);
  process.exit(code);
}

function runInit(args: string[]): void {
  const { values, positionals } = parse('init', {
    args,
    allowPositionals: true,
    options: { 'no-console': { type: 'boolean' }, 'no-worker': { type: 'boolean' }, force: { type: 'boolean' } },
  });
  const [publicDir, ...extra] = positionals;
  if (!publicDir || extra.length > 0) fail(`init takes one folder (for Vite: swbucket init public)\n\nUsage:\n${USAGE.init}`);
  try {
    const r = init(publicDir, { console: !values['no-console'], worker: !values['no-worker'], force: values.force === true });
    console.log(`swbucket ${r.version}:`);
    for (const path of r.written) console.log(`  wrote ${path}`);
    console.log(`
Add to your app (before its first request to the service):

  import { startService } from 'swbucket/browser';
  await startService();

Then store and read objects with swbucket/client (see the README). ${values['no-console'] ? '' : 'The console opens at /swbucket/ beside your app.'}`);
  } catch (e) {
    if (e instanceof InitError) fail(e.message, 1);
    throw e;
  }
}

async function runServe(args: string[]): Promise<void> {
  const { values } = parse('serve', { args, options: { port: { type: 'string' }, host: { type: 'string' }, endpoint: { type: 'string' } } });
  const portText = values.port ?? process.env.PORT ?? '9000';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) fail(`invalid port "${portText}"`);
  const running = await startServer({ port, host: values.host ?? '127.0.0.1', ...(values.endpoint ? { endpoint: values.endpoint } : {}) });
  console.log(`swbucket ${VERSION} listening on ${running.url} (data in memory: gone when it stops)
  buckets: ${running.url}/{bucket}/{key} (path style), or Host: {bucket}.${running.endpoint}
  root credentials: AccessKeyId svcadmin, secret svcadmin-secret; every request is signed but anonymous reads of public-read buckets
  from Node: createClient({ endpoint: '${running.url}', accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' }) (swbucket/client)
  from a shell: see "The HTTP server" in the README for a signing helper`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`swbucket: ${signal}, stopping`);
    setTimeout(() => process.exit(1), 5000).unref();
    void running.close().then(() => process.exit(0));
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'init': return runInit(rest);
    case 'serve': return runServe(rest);
    case '--version': case '-v': console.log(VERSION); return;
    case undefined: case '--help': case '-h': case 'help': console.log(HELP); return;
    default: fail(`unknown command "${command}"\n\n${HELP}`);
  }
}

main(process.argv.slice(2)).catch((e: unknown) => fail(e instanceof Error ? e.message : String(e), 1));
