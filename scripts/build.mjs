#!/usr/bin/env node
// `npm run build` (and `prepare`): dist/ as the package ships it.
//
// - Declarations from TypeScript (`tsc --emitDeclarationOnly`), beside where each entry's
//   JavaScript lands, so `exports` types and code agree.
// - JavaScript from esbuild: one module per entry point of package.json `exports` (and the CLI),
//   with the code they share in chunks, dependencies left as imports. A bundled entry loads in a
//   few files instead of ~90 (the core's import is ~35 ms faster: docs/packaging.md); chunks keep
//   one instance of every module across entry points (`instanceof ToolError` holds between
//   `toolwarden` and `toolwarden/testing`).
//
// The BFCL eval stays out of dist: `cli/eval-bfcl.ts` is left as an import the installed package
// does not have, which `toolwarden eval bfcl` reports as "runs from a checkout".
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
rmSync(dist, { recursive: true, force: true });

execFileSync(
  process.execPath,
  [
    join(root, 'node_modules', 'typescript', 'bin', 'tsc'),
    '-p',
    'tsconfig.build.json',
    '--emitDeclarationOnly',
  ],
  {
    cwd: root,
    stdio: 'inherit',
  },
);

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const entryPoints = Object.values(pkg.exports)
  .filter((target) => typeof target === 'object')
  .map((target) => target.default.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts'));
entryPoints.push('cli/main.ts');
// Temporal's worker bundles the workflow module from a file path of its own (docs/temporal.md §Worker).
entryPoints.push('temporal/workflows.ts');

await build({
  absWorkingDir: root,
  entryPoints,
  outdir: 'dist',
  outbase: '.',
  entryNames: '[dir]/[name]',
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  external: ['./eval-bfcl.ts'],
  legalComments: 'none',
  logLevel: 'warning',
});
