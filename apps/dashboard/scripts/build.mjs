// The dashboard's production build: apps/shared/build.mjs, with this app's Vite.
import { fileURLToPath } from 'node:url';
import { buildApp } from '../../shared/build.mjs';

await buildApp(fileURLToPath(new URL('..', import.meta.url)), () => import('vite'));
