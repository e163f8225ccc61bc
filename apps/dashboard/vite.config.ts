import { defineConfig } from 'vite';

// Served by the read-api under /dashboard/ (@fastify/static over dist/): every file from this build.
export default defineConfig({
  base: '/dashboard/',
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022' },
});
