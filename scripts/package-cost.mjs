#!/usr/bin/env node
// What an app pays for toolwarden (docs/packaging.md): packs this checkout, installs the tarball
// into an empty app (its required peers come with it), and reports the app's node_modules size and
// the cold import time of each entry point (median of fresh processes; noisy on a loaded machine).
//
//   node scripts/package-cost.mjs [--runs 9] [--keep]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const runs = Number(args[args.indexOf('--runs') + 1] || 9) || 9;
const app = mkdtempSync(join(tmpdir(), 'toolwarden-cost-'));
const npm = (...argv) =>
  execFileSync('npm', argv, { cwd: app, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

const tarball = execFileSync('npm', ['pack', '--pack-destination', app, '--silent'], {
  cwd: root,
  encoding: 'utf8',
})
  .trim()
  .split('\n')
  .at(-1);
writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'cost-app', private: true, type: 'module' }));
npm('install', '--prefer-offline', '--no-audit', '--no-fund', join(app, tarball));
const size = execFileSync('du', ['-sk', join(app, 'node_modules')], { encoding: 'utf8' }).split('\t')[0];
const packages =
  execFileSync('npm', ['ls', '--all', '--parseable'], { cwd: app, encoding: 'utf8' }).trim().split('\n')
    .length - 1;
console.log(
  `install: ${(Number(size) / 1024).toFixed(1)} MB in node_modules, ${packages} packages (${tarball})`,
);

function coldImport(specifier, before = []) {
  const script = `${before.map((name) => `await import(${JSON.stringify(name)});`).join('')}const t = performance.now(); await import(${JSON.stringify(specifier)}); console.log(performance.now() - t);`;
  const times = [];
  for (let i = 0; i < runs; i++) {
    times.push(
      Number(
        execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: app, encoding: 'utf8' }),
      ),
    );
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)].toFixed(0);
}
for (const entry of ['toolwarden', 'toolwarden/testing', 'toolwarden/telemetry', 'toolwarden/diagram']) {
  console.log(`import('${entry}'): ${coldImport(entry)} ms cold (median of ${runs})`);
}
console.log(
  `import('toolwarden') after import('zod'): ${coldImport('toolwarden', ['zod'])} ms (median of ${runs})`,
);
console.log(`import('zod') alone: ${coldImport('zod')} ms (median of ${runs})`);
if (args.includes('--keep')) console.log(`app kept in ${app}`);
else rmSync(app, { recursive: true, force: true });
