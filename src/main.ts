// This repo's own site: the console at the root, with swbucket's worker registered at /sw.js.
import { mount } from 'svelte';
import './console/console.css';
import App from './App.svelte';
import { startService } from './browser/index.ts';

mount(App, { target: document.getElementById('app')!, props: { start: () => startService() } });
