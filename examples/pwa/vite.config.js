import { defineConfig } from 'vite';
import { VitePWA } from 'vite-plugin-pwa';
import { swbucket } from 'swbucket/vite';

export default defineConfig({
  plugins: [
    // The app's own service worker (src/app-sw.js), built by vite-plugin-pwa with its precache list.
    VitePWA({
      strategies: 'injectManifest',
      srcDir: 'src',
      filename: 'app-sw.js',
      injectRegister: false,
      manifest: { name: 'Offline photos', short_name: 'Photos', start_url: '.', display: 'standalone', icons: [] },
      injectManifest: { globPatterns: ['**/*.{js,css,html}'] },
      devOptions: { enabled: true, type: 'module' },
    }),
    // Only the console: swbucket runs inside the app's own worker, so no sw.js of its own.
    swbucket({ worker: false }),
  ],
});
