#!/usr/bin/env node
// The `toolwarden` command. In a source checkout (cli/main.ts present) it runs the TypeScript
// through tsx, so `npm start` works right after `npm install` and never runs a stale build; an
// installed package, which ships only dist/, runs the compiled JavaScript.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = fileURLToPath(new URL('../cli/main.ts', import.meta.url));
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source);
} else {
  await import(fileURLToPath(new URL('../dist/cli/main.js', import.meta.url)));
}
