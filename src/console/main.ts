// The console as it ships for apps: static files at `{base}swbucket/` on the app's own origin. It
// uses the worker the app registered (swbucket's sw.js or the app's own, composing swbucket/sw)
// and never replaces it; only when the app registered none does it register `{base}sw.js` itself.
import { mount } from 'svelte';
import './console.css';
import App from '../App.svelte';
import { startService } from '../browser/start.ts';

async function start() {
  const appBase = new URL('../', location.href).href;
  const registered = await navigator.serviceWorker?.getRegistration(appBase);
  return registered ? startService({ register: false }) : startService({ scriptUrl: new URL('sw.js', appBase).href });
}

mount(App, { target: document.getElementById('app')!, props: { start } });
