#!/usr/bin/env node
// What an app pays for toolwarden (docs/packaging.md §Cost): packs this checkout, installs the
// tarball into an empty app (its required peers come with it), and reports the app's node_modules
// size and the cold import time of each entry point (median of fresh processes; noisy on a loaded
// machine, so CPU time is reported beside wall time). `npm run bench` runs it last; issue 39's target:
// a cold `import('toolwarden')` at most twice zod's own.
//
//   node scripts/package-cost.mjs [--import-runs 9] [--keep]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * `import(specifier)` in `runs` fresh processes in `app`, after importing `before`: the median wall
 * time and the median CPU time (user + system, `process.cpuUsage`), ms. On a machine shared with
 * other builds the wall time mostly measures the queue for a core; the CPU time is the import's
 * own work, and what the ratios below are taken from.
 */
function coldImport(app, specifier, runs, before = []) {
  const preload = before.map((name) => `await import(${JSON.stringify(name)});`).join('');
  const script = `${preload}const t = performance.now(); const c = process.cpuUsage(); await import(${JSON.stringify(specifier)}); const d = process.cpuUsage(c); console.log(performance.now() - t, (d.user + d.system) / 1000);`;
  const wall = [];
  const cpu = [];
  for (let i = 0; i < runs; i++) {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: app,
      encoding: 'utf8',
    });
    const [ms, cpuMs] = out.trim().split(' ').map(Number);
    wall.push(ms);
    cpu.push(cpuMs);
  }
  const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  return {
    wall: median(wall),
    cpu: median(cpu),
    toString: () => `${median(wall).toFixed(0)} ms (CPU ${median(cpu).toFixed(0)} ms)`,
  };
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
    console.log(`import('${entry}'): ${coldImport(app, entry, runs)} cold (median of ${runs})`);
  }
  const afterZod = coldImport(app, 'toolwarden', runs, ['zod']);
  console.log(`import('toolwarden') after import('zod'): ${afterZod} (median of ${runs})`);
  const zod = coldImport(app, 'zod', runs);
  console.log(`import('zod') alone: ${zod} (median of ${runs})`);
  const core = coldImport(app, 'toolwarden', runs);
  console.log(
    `import('toolwarden') / import('zod'), cold: ${(core.cpu / zod.cpu).toFixed(2)}x in CPU time, ${(core.wall / zod.wall).toFixed(2)}x in wall time; target (issue 39 item 3) ≤ 2x`,
  );
  if (keep) console.log(`app kept in ${app}`);
  else rmSync(app, { recursive: true, force: true });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const index = args.indexOf('--import-runs');
  packageCost({ runs: index >= 0 ? Number(args[index + 1]) || 9 : 9, keep: args.includes('--keep') });
}
