// Writes examples/vanilla/public/welcome.tar: the fixture the notes example seeds an empty store
// with (startService({ seed })). Made by swbucket's own export, from an in-memory service, so it is
// exactly what `swbucket export` or the console's Export would give. Run: npm run example-archive
import 'fake-indexeddb/auto';
import { writeFileSync } from 'node:fs';
import { IDBFactory } from 'fake-indexeddb';
import { createHandler } from '../sw/core/handler.ts';
import { openIdbStore } from '../sw/store/idb.ts';
import { createClient } from '../src/client/client.ts';
import { ROOT_CREDENTIALS } from '../protocol/instance.ts';

const store = await openIdbStore({ indexedDB: new IDBFactory(), name: 'welcome' });
// As the worker runs it: Request objects made here carry no Content-Length.
const handle = createHandler({ store, endpoint: 'svc.localhost', contentLength: 'body' });
const client = createClient({
  endpoint: 'http://svc.localhost', ...ROOT_CREDENTIALS,
  fetch: (input, init) => handle(new Request(input, init)),
});
await client.createBucket('notes');
await client.putObject('notes', 'welcome.txt', [
  'This note came from welcome.tar, the seed archive of this example.',
  'startService({ seed: "welcome.tar" }) imported it because the store was empty;',
  'on the next start it is not imported again: your own notes stay as they are.',
  '',
].join('\n'), { contentType: 'text/plain; charset=utf-8', metadata: { author: 'swbucket' }, checksum: false });

const archive = await client.exportArchive({ buckets: ['notes'] });
const out = new URL('../examples/vanilla/public/welcome.tar', import.meta.url);
writeFileSync(out, new Uint8Array(await new Response(archive.body).arrayBuffer()));
console.log(`wrote ${out.pathname} (${archive.objects} object)`);
store.close();
