import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

/** `scripts/dts-size.mjs` (issue 28 item 4, run by .ci/run after the build) on .d.ts files of its own. */
const root = join(import.meta.dirname, '..');
const script = join(root, 'scripts', 'dts-size.mjs');
const dir = mkdtempSync(join(tmpdir(), 'toolwarden-dts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function check(files: Record<string, string>) {
  const dist = mkdtempSync(join(dir, 'dist-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dist, name, '..'), { recursive: true });
    writeFileSync(join(dist, name), text);
  }
  return promisify(execFile)(process.execPath, [script, '--dist', dist]).then(
    ({ stdout }) => ({ code: 0, out: stdout }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      out: error.stdout + error.stderr,
    }),
  );
}

const member = (i: number) => `    field${i}: { a: string; b: number; c: boolean; d: string[] };\n`;

describe('dts-size', () => {
  it('fails naming a declaration over 5 KB (an inlined type), and passes small ones', async () => {
    const big = `export declare function createThing(): {\n${Array.from({ length: 120 }, (_, i) => member(i)).join('')}};\n`;
    const small = '/** Doc. */\nexport interface Thing {\n    a: string;\n}\n';
    const failed = await check({ 'a.d.ts': big, 'b/c.d.ts': small });
    expect(failed.code).toBe(1);
    expect(failed.out).toMatch(/\d+\.\d KB\s+.*a\.d\.ts\s+createThing/);
    expect(failed.out).toContain('1 declaration(s) over 5.0 KB');

    const passed = await check({ 'b/c.d.ts': small });
    expect(passed.code).toBe(0);
  });

  it("leaves doc comments out of a declaration's size", async () => {
    const docs = Array.from({ length: 200 }, () => '     * Long documentation of the member.\n').join('');
    const documented = `export interface Documented {\n    /**\n${docs}     */\n    a: string;\n}\n`;
    expect((await check({ 'd.d.ts': documented })).code).toBe(0);
  });

  it("passes on the package's own declarations, with no exception: runMachine and RunEventSchema included", async () => {
    // The declarations `npm run build` emits, into a folder of the test's own (dist/ is left as it is).
    const dist = mkdtempSync(join(dir, 'own-'));
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    await promisify(execFile)(
      process.execPath,
      [tsc, '-p', 'tsconfig.build.json', '--emitDeclarationOnly', '--outDir', dist],
      { cwd: root },
    );
    const { stdout } = await promisify(execFile)(process.execPath, [script, '--dist', dist, '--top', '50']);
    expect(stdout).toContain('every declaration is at most 5.0 KB');
    // Were 13.6 KB and 8.2 KB, inferred by XState and zod: now their written types' names.
    expect(stdout).not.toMatch(/machines\/run-machine\.d\.ts\s+runMachine/);
    expect(stdout).not.toMatch(/run-events\.d\.ts\s+RunEventSchema/);
  }, 180_000);
});
