// The dashboard's build: Preact through esbuild's automatic JSX, one hashed bundle in dist/web,
// served by the relay itself (relay/http/dashboard.ts). No dev server is needed to use it.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: '/',
  logLevel: 'warn',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: fileURLToPath(new URL('../../dist/web', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // The relay compresses once at start; a source map would ship our sources to every browser.
    sourcemap: false,
    // One small bundle: no inline <script> (the CSP allows only 'self').
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
  },
});
