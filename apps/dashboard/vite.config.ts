import { defineConfig } from 'vite';
import { appConfig } from '../shared/vite.js';

export default defineConfig(appConfig('dashboard'));
