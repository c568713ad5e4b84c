import { defineConfig } from 'vite';
import { swbucket } from 'swbucket/vite';

// swbucket's worker at {base}sw.js and its console at {base}swbucket/, in dev and in the build.
export default defineConfig({ plugins: [swbucket()] });
