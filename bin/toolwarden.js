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
  // commander is an optional peer dependency of the installed package (a library user may never
  // run the command): say what to install rather than fail with ERR_MODULE_NOT_FOUND.
  try {
    import.meta.resolve('commander');
  } catch {
    console.error(
      "The toolwarden command needs commander, an optional peer dependency: npm install 'commander@^14.0.3'",
    );
    process.exit(1);
  }
  // A TypeScript config (`mcp serve -c gateway.config.ts`, `catalog -c …`): Node 20 cannot import
  // .ts by itself, so it goes through tsx when the app has it, and otherwise the command says what
  // to do rather than fail with ERR_UNKNOWN_FILE_EXTENSION (issue 28 item 7).
  const at = process.argv.findIndex((arg) => arg === '-c' || arg === '--config');
  const config = at === -1 ? undefined : process.argv[at + 1];
  if (config && /\.[cm]?ts$/.test(config) && !process.features.typescript) {
    let tsx;
    try {
      tsx = import.meta.resolve('tsx/esm/api');
    } catch {
      console.error(
        `toolwarden: ${config} is TypeScript, which Node ${process.versions.node} cannot load by itself. ` +
          'Install tsx in your app (npm install -D tsx) and run the command again, or write the config as .mjs.',
      );
      process.exit(1);
    }
    (await import(tsx)).register();
  }
  await import(fileURLToPath(new URL('../dist/cli/main.js', import.meta.url)));
}
