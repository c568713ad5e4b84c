// Notes kept in the browser by swbucket: each note is an object in the bucket "notes".
import { startService } from 'swbucket/browser';
import { createClient, SvcClientError } from 'swbucket/client';

const status = document.getElementById('status');
const list = document.getElementById('notes');
const form = document.getElementById('new-note');

// Whatever goes wrong is shown on the page, not only in the developer tools.
const fail = (e) => {
  status.textContent = `Something went wrong: ${e instanceof Error ? e.message : e}`;
  status.style.color = '#b00';
};
addEventListener('unhandledrejection', (event) => fail(event.reason));
// A module whose top-level await fails reports an error event, not a rejection.
addEventListener('error', (event) => fail(event.error ?? event.message));

// An empty store starts with the notes in public/welcome.tar (made by swbucket's export); once
// anything is stored, the seed is left alone.
const service = await startService({ seed: 'welcome.tar' });
const s3 = createClient({ endpoint: `http://${service.endpoint}`, accessKeyId: 'svcadmin', secretAccessKey: 'svcadmin-secret' });

try {
  await s3.createBucket('notes');
} catch (e) {
  if (!(e instanceof SvcClientError && e.code === 'BucketAlreadyExists')) throw e;
}

async function show() {
  list.replaceChildren();
  for await (const entry of s3.listAllObjects('notes')) {
    const item = document.createElement('li');
    const link = document.createElement('a');
    // The bucket is private: a presigned link, on the page's mount so that a click reaches the worker.
    link.href = service.mountUrl(await s3.presign('notes', entry.key, { expiresIn: 3600 }));
    link.textContent = entry.key;
    item.append(link, ` (${entry.size} bytes)`);
    list.append(item);
  }
  status.textContent = `Stored in this browser by swbucket ${service.version}: ${list.children.length} note(s).`;
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const data = new FormData(form);
  try {
    await s3.putObject('notes', String(data.get('title')), String(data.get('text')), { contentType: 'text/plain; charset=utf-8' });
    form.reset();
    await show();
  } catch (e) {
    fail(e);
  }
});

await show();
