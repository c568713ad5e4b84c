// The console as it ships for apps: static files at `{base}swbucket/` on the app's own origin. It
// uses the worker the app registered (swbucket's sw.js or the app's own, composing swbucket/sw)
// and never replaces it; only when the app registered none does it register `{base}sw.js` itself.
import { mount } from 'svelte';
import './console.css';
import App from '../App.svelte';
import { ServiceStartError, startService } from '../browser/index.ts';

async function start() {
  const appBase = new URL('../', location.href).href;
  const registered = await navigator.serviceWorker?.getRegistration(appBase);
  if (registered) return startService({ register: false });
  try {
    return await startService({ scriptUrl: new URL('sw.js', appBase).href });
  } catch (e) {
    if (!(e instanceof ServiceStartError && e.reason === 'register-failed')) throw e;
    // No sw.js beside the app: its service runs inside the app's own worker, not started yet.
    throw new ServiceStartError('no-worker', `No service worker serves this app yet, and there is no ${appBase}sw.js to start one. `
      + 'Open the app first (it starts the service), then reload this page.');
  }
}

mount(App, { target: document.getElementById('app')!, props: { start } });
