import { defineConfig } from 'vite';

// Served by the read-api under /homestead/ (@fastify/static over dist/): every file from this build.
export default defineConfig({
  base: '/homestead/',
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022' },
});
