#!/usr/bin/env node
// The `toolwarden` command. A built package runs dist/; a source checkout runs the TypeScript
// directly through tsx, so `npm start` works right after `npm install` with no build step.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const built = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
if (existsSync(built)) {
  await import(built);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../cli/main.ts');
}
