import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';

// Relative base so the same build loads from app://podscope/ (Electron) and http://127.0.0.1:<port>/ (browser mode).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/renderer', import.meta.url)),
    emptyOutDir: true,
    sourcemap: true,
    target: 'es2022',
    // Inline nothing: the CSP forbids data:/inline scripts, so every asset must be a file.
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 1200,
  },
});
