// dist/cjs holds CommonJS files under a "type": "module" package; this marker tells Node so.
import { writeFileSync } from 'node:fs';

writeFileSync(new URL('../dist/cjs/package.json', import.meta.url), '{ "type": "commonjs" }\n');
