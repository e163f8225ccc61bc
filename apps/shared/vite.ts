/**
 * The Vite configuration of the app served by the read-api under `/<name>/` (@fastify/static over its
 * dist/): every file from this build, for ES2022 browsers.
 */
export const appConfig = (name: string) => ({
  base: `/${name}/`,
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022' },
});
