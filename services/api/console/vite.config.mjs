// Builds the web console into ./dist, which the API serves at /console (services/api/src/console).
// Preact's JSX through Vite's own transform: no plugin needed. The typed client is compiled from
// its sources (libs/client/src), the same code the published package is built from.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  resolve: {
    alias: { '@agentic-task-service/client': fileURLToPath(new URL('../../../libs/client/src/index.ts', import.meta.url)) },
  },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No inline script or data: URL may appear: the CSP refuses both.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
    reportCompressedSize: false,
  },
  logLevel: 'warn',
});
