// The `swbucket` command: `init` puts the worker and the console into an app, `serve` runs the
// HTTP server.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { init, InitError } from './init.ts';
import { startServer } from './server.ts';
import { existsSync, readFileSync } from 'node:fs';
import type { ReplicaConfig } from '../sw/replica/replicas.ts';
import { Writable } from 'node:stream';
import { OutputExistsError, exportToFile, importFromFile, rootClient, seedIfEmpty, type Connection } from './archive.ts';
import { SvcClientError } from '../src/client/errors.ts';
import { VERSION } from '../protocol/version.ts';

const USAGE = {
  init: `  swbucket init <publicDir> [--no-console] [--no-worker] [--force]
      Copy the service worker (<publicDir>/sw.js) and the console (<publicDir>/swbucket/)
      into your app's static folder (Vite: public). Run it again after upgrading swbucket.
      --no-worker: only the console (your own worker composes swbucket/sw); --no-console: only
      the worker; --force: replace files that are not swbucket's.`,
  serve: `  swbucket serve [--port 9000] [--host 127.0.0.1] [--data DIR] [--seed FILE] [--replicas FILE]
               [--endpoint svc.localhost] [--s3-endpoint s3.localhost] [--nos-endpoint nos.localhost] [--dialect svc|s3|nos]
      The same service as an HTTP server in Node, speaking S3 (the AWS SDKs, boto3, the AWS CLI),
      NOS and swbucket's own dialect on one port: a signed request in the dialect it is signed in,
      an unsigned one in its host's (the endpoints, for virtual-host requests), else in --dialect's
      (default svc). PORT also sets the port. Data lives in memory
      and is gone when it stops, or with --data is kept in DIR (created if missing): every write
      is on disk before its answer, and one server at a time owns DIR. --seed FILE: import that
      archive (swbucket export) when the store is empty, as a fixture; a store with data is left alone.
      --replicas FILE: a JSON array of replicas, each a local bucket kept in sync with a remote S3
      bucket: [{ "bucket": "photos", "remote": { "endpoint": "https://…", "region": "…", "bucket": "…",
      "forcePathStyle": true, "credentials": { "accessKeyId": "…", "secretAccessKey": "…" } } }].`,
  export: `  swbucket export [-o FILE] [--force] [--bucket NAME]... [--versions] [--accounts] [--endpoint URL]
      Save a running server's data as a tar archive (default file: swbucket-DATE-TIME.tar here;
      -o - writes to stdout; an existing file is replaced only with --force). --bucket: only these buckets; --versions: every stored version;
      --accounts: the accounts too, with their secrets (keep such a file as you keep a password).`,
  import: `  swbucket import FILE [--conflict fail|skip|overwrite] [--endpoint URL]
      Put an archive's buckets, objects (and accounts) back into a running server. Where an object
      or account exists already: fail (the default; nothing is imported), skip it, or overwrite it.
      FILE - (or /dev/stdin) reads standard input, whole, before sending it.
  Both sign as root (svcadmin) unless SWBUCKET_ACCESS_KEY_ID and SWBUCKET_SECRET_ACCESS_KEY say
  otherwise; --endpoint defaults to http://127.0.0.1:9000 (or SWBUCKET_ENDPOINT).`,
};

const HELP = `swbucket ${VERSION}: object storage in the browser

Usage:
${USAGE.init}
${USAGE.serve}
${USAGE.export}
${USAGE.import}
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

Then store and read objects with the AWS SDK at http://s3.localhost, or with swbucket/client at http://svc.localhost (see the README). ${values['no-console'] ? '' : 'The console opens at /swbucket/index.html beside your app (at /swbucket/ too, once built: a dev server may answer that path with your app).'}`);
  } catch (e) {
    if (e instanceof InitError) fail(e.message, 1);
    throw e;
  }
}

/** The replicas a --replicas file names, checked enough to say what is wrong with it. */
function readReplicas(file: string): ReplicaConfig[] {
  let list: unknown;
  try {
    list = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    return fail(`--replicas: ${file} cannot be read as JSON: ${e instanceof Error ? e.message : e}`);
  }
  const str = (v: unknown) => typeof v === 'string' && v !== '';
  if (!Array.isArray(list)) return fail(`--replicas: ${file} must hold an array of replicas`);
  list.forEach((r: { bucket?: unknown; remote?: { endpoint?: unknown; region?: unknown; bucket?: unknown } }, i) => {
    if (!str(r?.bucket) || !str(r.remote?.endpoint) || !str(r.remote?.region) || !str(r.remote?.bucket)) {
      fail(`--replicas: replica ${i + 1} needs "bucket" and "remote": { "endpoint", "region", "bucket", "credentials" }`);
    }
  });
  return list as ReplicaConfig[];
}

async function runServe(args: string[]): Promise<void> {
  const { values } = parse('serve', {
    args,
    options: {
      port: { type: 'string' }, host: { type: 'string' }, endpoint: { type: 'string' }, 's3-endpoint': { type: 'string' },
      'nos-endpoint': { type: 'string' }, dialect: { type: 'string' }, data: { type: 'string' }, seed: { type: 'string' }, replicas: { type: 'string' },
    },
  });
  const replicas = values.replicas === undefined ? [] : readReplicas(values.replicas);
  const dialect = values.dialect;
  if (dialect !== undefined && dialect !== 'svc' && dialect !== 's3' && dialect !== 'nos') fail(`--dialect must be svc, s3 or nos\n\nUsage:\n${USAGE.serve}`);
  if (values.data === '') fail(`--data needs a directory\n\nUsage:\n${USAGE.serve}`);
  if (values.seed !== undefined && !existsSync(values.seed)) fail(`--seed: no such file: ${values.seed}`);
  const portText = values.port ?? process.env.PORT ?? '9000';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) fail(`invalid port "${portText}"`);
  const running = await startServer({
    port, host: values.host ?? '127.0.0.1', ...(values.endpoint ? { endpoint: values.endpoint } : {}), ...(values.data ? { dataDir: values.data } : {}),
    endpoints: { ...(values['s3-endpoint'] ? { s3: values['s3-endpoint'] } : {}), ...(values['nos-endpoint'] ? { nos: values['nos-endpoint'] } : {}) },
    ...(dialect ? { dialect } : {}),
    replicas,
  });
  running.replicas.on((e) => {
    if (e.type === 'status' && e.status.state === 'stopped') console.log(`swbucket: the replica of ${e.status.bucket} stopped: ${e.status.error}`);
    if (e.type === 'conflict') console.log(`swbucket: conflict in ${e.conflict.bucket}: ${e.conflict.key} changed on both sides${e.conflict.keptAt ? `; the other version is kept as ${e.conflict.keptAt}` : ''}`);
  });
  const upgraded = running.dataUpgradedFrom === undefined ? '' : `; upgraded from the layout of an earlier swbucket (${running.dataUpgradedFrom}), which can no longer open it`;
  const where = running.dataDir === undefined ? 'data in memory: gone when it stops' : `data kept in ${running.dataDir}${upgraded}`;
  console.log(`swbucket ${VERSION} listening on ${running.url} (${where})
  buckets: ${running.url}/{bucket}/{key} (path style), or Host: {bucket}.${running.endpoint}
  root credentials: AccessKeyId svcadmin, secret svcadmin-secret; every request is signed but anonymous reads of public-read buckets
  from Node: createClient({ endpoint: '${running.url}', accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' }) (swbucket/client)
  the AWS SDK: new S3Client({ endpoint: '${running.url}', forcePathStyle: true, region: 'us-east-1', credentials: { accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' } })
  from a shell: see "The HTTP server" in the README for a signing helper`);
  if (values.seed !== undefined) {
    try {
      const seeded = await seedIfEmpty({ endpoint: running.url }, values.seed);
      console.log(seeded
        ? `swbucket: seeded the empty store from ${values.seed}: ${seeded.objectsRestored} object(s) in ${seeded.bucketsCreated} bucket(s)`
        : `swbucket: not seeded from ${values.seed}: the store holds data already`);
    } catch (e) {
      await running.close();
      fail(`seeding from ${values.seed} failed, nothing was imported: ${e instanceof Error ? e.message : e}`, 1);
    }
  }
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

function connection(endpoint: string | undefined): Connection {
  const id = process.env.SWBUCKET_ACCESS_KEY_ID;
  const secret = process.env.SWBUCKET_SECRET_ACCESS_KEY;
  return {
    endpoint: endpoint ?? process.env.SWBUCKET_ENDPOINT ?? 'http://127.0.0.1:9000',
    ...(id && secret ? { accessKeyId: id, secretAccessKey: secret } : {}),
  };
}

const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;

/** The service's refusal, or why it could not be reached, as one line that says what to do. */
function archiveFailure(e: unknown, c: Connection): never {
  if (e instanceof SvcClientError) return fail(`${e.code}: ${e.message}`, 1);
  const cause = (e as { cause?: { code?: string } }).cause?.code;
  if (cause === 'ECONNREFUSED') return fail(`nothing answers at ${c.endpoint}: start the server (swbucket serve) or pass --endpoint`, 1);
  return fail(e instanceof Error ? e.message : String(e), 1);
}

async function runExport(args: string[]): Promise<void> {
  const { values } = parse('export', {
    args,
    options: {
      output: { type: 'string', short: 'o' }, bucket: { type: 'string', multiple: true },
      versions: { type: 'boolean' }, accounts: { type: 'boolean' }, endpoint: { type: 'string' }, force: { type: 'boolean' },
    },
  });
  const c = connection(values.endpoint);
  const options = {
    ...(values.bucket ? { buckets: values.bucket } : {}), versions: values.versions === true, accounts: values.accounts === true,
  };
  try {
    if (values.output === '-') {
      const archive = await rootClient(c).exportArchive(options);
      await archive.body.pipeTo(Writable.toWeb(process.stdout));
      return;
    }
    let shown = 0;
    const r = await exportToFile(c, values.output ?? ((suggested) => suggested), options, (written, about) => {
      if (process.stderr.isTTY && written - shown > 4 * 1048576) {
        shown = written;
        process.stderr.write(`\r  ${mib(written)} of about ${mib(about)}`);
      }
    }, { force: values.force === true });
    if (shown > 0) process.stderr.write('\n');
    console.log(`swbucket: exported ${r.objects} object${r.objects === 1 ? '' : 's'} (${mib(r.bytes)}) to ${r.file}`);
  } catch (e) {
    if (e instanceof OutputExistsError) fail(e.message, 1);
    archiveFailure(e, c);
  }
}

async function runImport(args: string[]): Promise<void> {
  const { values, positionals } = parse('import', {
    args, allowPositionals: true, options: { conflict: { type: 'string' }, endpoint: { type: 'string' } },
  });
  const [file, ...extra] = positionals;
  if (!file || extra.length > 0) fail(`import takes one archive file\n\nUsage:\n${USAGE.import}`);
  const conflict = values.conflict ?? 'fail';
  if (conflict !== 'fail' && conflict !== 'skip' && conflict !== 'overwrite') fail(`--conflict must be fail, skip or overwrite, not "${conflict}"`);
  if (file !== '-' && !existsSync(file)) fail(`no such file: ${file}`, 1);
  const c = connection(values.endpoint);
  try {
    const r = await importFromFile(c, file, { conflict });
    console.log(`swbucket: imported ${r.objectsRestored} object${r.objectsRestored === 1 ? '' : 's'} (${mib(r.bytesRestored)}) into ${r.bucketsCreated} new and ${r.bucketsExisting} existing bucket${r.bucketsExisting === 1 ? '' : 's'}`
      + (r.objectsSkipped ? `; skipped ${r.objectsSkipped} that existed` : '')
      + (r.accountsCreated + r.accountsUpdated ? `; accounts: ${r.accountsCreated} created, ${r.accountsUpdated} updated` : ''));
  } catch (e) {
    archiveFailure(e, c);
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'init': return runInit(rest);
    case 'serve': return runServe(rest);
    case 'export': return runExport(rest);
    case 'import': return runImport(rest);
    case '--version': case '-v': console.log(VERSION); return;
    case undefined: case '--help': case '-h': case 'help': console.log(HELP); return;
    default: fail(`unknown command "${command}"\n\n${HELP}`);
  }
}

main(process.argv.slice(2)).catch((e: unknown) => fail(e instanceof Error ? e.message : String(e), 1));
