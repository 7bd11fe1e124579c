import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// The config `scripts/jaeger.sh start` writes (printed by `jaeger.sh config`), without a Jaeger:
// the UI build it serves (JAEGER_UI_ASSETS, default ../shared/jaeger-ui/build beside the repo) and
// `enable_tracing: false`. test/telemetry-jaeger-ui.e2e.test.ts starts a real one with it.
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SCRIPT = join(REPO, 'scripts/jaeger.sh');
const SHARED_UI = resolve(REPO, '../shared/jaeger-ui/build');

const scratch = mkdtempSync(join(tmpdir(), 'jaeger-config-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function config(env: Record<string, string | undefined>, cwd = REPO) {
  const merged: Record<string, string | undefined> = { ...process.env, ...env };
  for (const key of Object.keys(merged)) if (merged[key] === undefined) delete merged[key];
  const result = spawnSync('bash', [SCRIPT, 'config'], {
    cwd,
    env: merged as NodeJS.ProcessEnv,
    encoding: 'utf8',
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The `jaeger_query` extension block of a generated config. */
function queryBlock(yaml: string): string {
  const start = yaml.indexOf('  jaeger_query:\n');
  const end = yaml.indexOf('\n  jaeger_storage:', start);
  return yaml.slice(start, end);
}

function uiBuild(name: string): string {
  const dir = join(scratch, name);
  mkdirSync(join(dir, 'static'), { recursive: true });
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>Jaeger UI</title>');
  return dir;
}

describe('scripts/jaeger.sh config: the UI it serves and Jaeger tracing itself', () => {
  it('turns off Jaeger tracing its own query API (the 10 s wait on stop)', () => {
    const { status, stdout } = config({ JAEGER_UI_ASSETS: 'none' });
    expect(status).toBe(0);
    expect(queryBlock(stdout)).toContain('\n    enable_tracing: false');
  });

  it('serves the folder JAEGER_UI_ASSETS names, made absolute from the current directory', () => {
    const build = uiBuild('ui-a');
    expect(queryBlock(config({ JAEGER_UI_ASSETS: build }).stdout)).toContain(
      `\n    ui:\n      assets_path: "${realpathSync(build)}"`,
    );
    const fromScratch = config({ JAEGER_UI_ASSETS: relative(scratch, build) }, scratch);
    expect(fromScratch.status).toBe(0);
    expect(queryBlock(fromScratch.stdout)).toContain(`assets_path: "${realpathSync(build)}"`);
  });

  it('refuses a folder that is not a UI build, naming it', () => {
    const { status, stdout, stderr } = config({ JAEGER_UI_ASSETS: scratch });
    expect(status).toBe(1);
    expect(stderr).toContain(`JAEGER_UI_ASSETS=${scratch} is not a Jaeger UI build (no index.html in it)`);
    expect(stdout).not.toContain('assets_path');
  });

  it('serves none with JAEGER_UI_ASSETS=none', () => {
    expect(config({ JAEGER_UI_ASSETS: 'none' }).stdout).not.toContain('assets_path');
  });

  it.skipIf(!existsUi())('defaults to ../shared/jaeger-ui/build beside the repository', () => {
    const { status, stdout } = config({ JAEGER_UI_ASSETS: undefined }, scratch);
    expect(status).toBe(0);
    expect(queryBlock(stdout)).toContain(`assets_path: "${realpathSync(SHARED_UI)}"`);
  });
});

function existsUi(): boolean {
  try {
    realpathSync(join(SHARED_UI, 'index.html'));
    return true;
  } catch {
    return false;
  }
}
