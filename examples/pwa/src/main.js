// The page registers its own worker (src/app-sw.js), then lets swbucket use it: `register: false`
// means swbucket registers nothing and only checks that the worker answers for it.
import { startService } from 'swbucket/browser';
import { createClient, SvcClientError } from 'swbucket/client';

const status = document.getElementById('status');
const photos = document.getElementById('photos');

const script = import.meta.env.DEV ? 'dev-sw.js?dev-sw' : 'app-sw.js';
await navigator.serviceWorker.register(import.meta.env.BASE_URL + script, { type: import.meta.env.DEV ? 'module' : 'classic' });
const service = await startService({ register: false });

const ping = await (await fetch(import.meta.env.BASE_URL + 'api/ping')).json();
document.getElementById('ping').textContent = `The app's own route still answers: ${JSON.stringify(ping)}`;

const s3 = createClient({ endpoint: `http://${service.endpoint}`, accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });
try {
  await s3.createBucket('photos', { acl: 'public-read' });
} catch (e) {
  if (!(e instanceof SvcClientError && e.code === 'BucketAlreadyExists')) throw e;
}

async function show() {
  photos.replaceChildren();
  for await (const entry of s3.listAllObjects('photos')) {
    const img = document.createElement('img');
    img.alt = entry.key;
    img.src = `${service.mount}photos/${encodeURIComponent(entry.key)}`; // public-read: a plain <img> works
    photos.append(img);
  }
  status.textContent = `${photos.children.length} photo(s), kept in this browser by swbucket inside the app's worker ${new URL(service.scriptUrl).pathname}.`;
}

document.getElementById('picker').addEventListener('change', async (event) => {
  for (const file of event.target.files) await s3.putObject('photos', file.name, file, { contentType: file.type });
  await show();
});

await show();
