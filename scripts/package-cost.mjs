#!/usr/bin/env node
// What an app pays for toolwarden (docs/packaging.md §Cost): packs this checkout, installs the
// tarball into an empty app (its required peers come with it), and reports the app's node_modules
// size and the cold import time of each entry point (median of fresh processes; noisy on a loaded
// machine). `npm run bench` runs it last; issue 16's target: `import('toolwarden')` ≤ 80 ms.
//
//   node scripts/package-cost.mjs [--import-runs 9] [--keep]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Median ms of `import(specifier)` in `runs` fresh processes in `app`, after importing `before`. */
function coldImport(app, specifier, runs, before = []) {
  const preload = before.map((name) => `await import(${JSON.stringify(name)});`).join('');
  const script = `${preload}const t = performance.now(); await import(${JSON.stringify(specifier)}); console.log(performance.now() - t);`;
  const times = [];
  for (let i = 0; i < runs; i++) {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: app,
      encoding: 'utf8',
    });
    times.push(Number(out));
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)].toFixed(0);
}

/** Packs, installs into an empty app, prints its size and the entry points' cold import times. */
export function packageCost({ runs = 9, keep = false } = {}) {
  const app = mkdtempSync(join(tmpdir(), 'toolwarden-cost-'));
  const packed = execFileSync('npm', ['pack', '--pack-destination', app, '--silent'], {
    cwd: root,
    encoding: 'utf8',
  });
  const tarball = packed.trim().split('\n').at(-1);
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'cost-app', private: true, type: 'module' }),
  );
  execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(app, tarball)], {
    cwd: app,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const size = execFileSync('du', ['-sk', join(app, 'node_modules')], { encoding: 'utf8' }).split('\t')[0];
  const listed = execFileSync('npm', ['ls', '--all', '--parseable'], { cwd: app, encoding: 'utf8' });
  const packages = listed.trim().split('\n').length - 1;
  console.log(
    `install: ${(Number(size) / 1024).toFixed(1)} MB in node_modules, ${packages} packages (${tarball})`,
  );
  for (const entry of ['toolwarden', 'toolwarden/testing', 'toolwarden/telemetry', 'toolwarden/diagram']) {
    console.log(`import('${entry}'): ${coldImport(app, entry, runs)} ms cold (median of ${runs})`);
  }
  const afterZod = coldImport(app, 'toolwarden', runs, ['zod']);
  console.log(`import('toolwarden') after import('zod'): ${afterZod} ms (median of ${runs})`);
  console.log(`import('zod') alone: ${coldImport(app, 'zod', runs)} ms (median of ${runs})`);
  console.log(
    "target (issue 16): import('toolwarden') ≤ 80 ms; zod, which an app imports anyway to define its tools, is most of the cold time",
  );
  if (keep) console.log(`app kept in ${app}`);
  else rmSync(app, { recursive: true, force: true });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const index = args.indexOf('--import-runs');
  packageCost({ runs: index >= 0 ? Number(args[index + 1]) || 9 : 9, keep: args.includes('--keep') });
}
