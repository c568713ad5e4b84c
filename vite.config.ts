import { defineConfig } from 'vitest/config';
import { svelte } from '@sveltejs/vite-plugin-svelte';

export default defineConfig({
  plugins: [svelte()],
  test: {
    include: ['test/unit/**/*.test.ts'],
    setupFiles: ['test/support/setup.ts'],
    environment: 'node',
    testTimeout: 30_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
