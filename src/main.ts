import { mount } from 'svelte';
import './console/console.css';
import App from './App.svelte';

mount(App, { target: document.getElementById('app')! });
