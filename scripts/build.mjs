#!/usr/bin/env node
// `npm run build` (and `prepack`, so `npm pack` builds what it packs): dist/ as the package ships it.
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
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const tscBin = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
// The build needs the checkout's dev dependencies: installing from a checkout that never ran
// `npm install` (`npm install ../toolwarden` in an app) must say so, not fail with a bare
// ERR_MODULE_NOT_FOUND for esbuild (issue 28 item 1).
const { build } = await import('esbuild').catch((error) => {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
  return {};
});
if (build === undefined || !existsSync(tscBin)) {
  console.error(
    `toolwarden: building the package needs its dev dependencies (esbuild, typescript), and ${root} has none installed.\n` +
      `  Run \`npm install\` in ${root} first, then install it again;\n` +
      '  or install a packed copy: `npm pack` there, then `npm install ./toolwarden-<version>.tgz` in your app (README, Install).',
  );
  process.exit(1);
}
// The inspector page's script, from inspector/page/*.ts: regenerated so dist/ never ships a stale one.
const { PAGE_BUNDLE, pageBundleModule } = await import('./build-page.mjs');
writeFileSync(PAGE_BUNDLE, await pageBundleModule());
const dist = join(root, 'dist');
rmSync(dist, { recursive: true, force: true });

execFileSync(process.execPath, [tscBin, '-p', 'tsconfig.build.json', '--emitDeclarationOnly'], {
  cwd: root,
  stdio: 'inherit',
});

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
