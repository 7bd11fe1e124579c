import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without declarations (it runs in .ci/run without a build)
import { checkStructure, roomOf } from '../scripts/check-structure.mjs';

const root = mkdtempSync(join(tmpdir(), 'toolwarden-structure-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function tree(files: Record<string, string>): string[] {
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  return Object.keys(files);
}

const rules = {
  LAYERS: [['tools'], ['run'], ['runtime/stores'], ['runtime'], ['(root)']],
  SHARED_ROOMS: {},
  NOT_PRODUCT: ['test/', 'examples/x/'],
  MAX_FUNCTION_LINES: 5,
  EXCEPTIONS: {
    functions: [
      { file: 'run/long-allowed.ts', name: 'allowed', reason: 'named here' },
      { file: 'run/x.ts', name: 'splitLongAgo', reason: 'a function since split' },
    ],
    imports: [],
  },
};

describe('scripts/check-structure.mjs (issue 37 item 5)', () => {
  it('names rooms by top folder, runtime/<sub> under runtime/, (root) for top files', () => {
    expect([
      roomOf('index.ts'),
      roomOf('runtime/x.ts'),
      roomOf('runtime/stores/y.ts'),
      roomOf('tools/z.ts'),
    ]).toEqual(['(root)', 'runtime', 'runtime/stores', 'tools']);
  });

  it('fails a deliberate violation of each rule and honours a named exception', () => {
    const long = (name: string) => `export function ${name}() {\n${'  let a = 1;\n'.repeat(6)}}\n`;
    const files = tree({
      'tools/up.ts': "import type { X } from '../run/x.ts';\nexport type Y = X;\n",
      'run/x.ts': 'export type X = 1;\n',
      'run/long.ts': long('tooLong'),
      'run/long-allowed.ts': long('allowed'),
      'runtime/stores/a.ts': "import { b } from '../b.ts';\nexport const a = b;\n",
      'runtime/b.ts': "import { c } from './c.ts';\nexport const b = c;\n",
      'runtime/c.ts': "import type { b } from './b.ts';\nexport const c = 1 as unknown as typeof b;\n",
      'examples/app/main.ts': "import { defineTool } from '../../tools/up.ts';\nvoid defineTool;\n",
      'test/ignored.test.ts': "import '../runtime/b.ts';\n",
      'index.ts': "export * from './runtime/b.ts';\n",
    });
    const { violations, honoured } = checkStructure({ root, files, rules });
    expect(violations).toEqual(
      expect.arrayContaining([
        'tools/up.ts imports run/x.ts: run is above tools',
        'run/long.ts:1 tooLong is 8 lines (at most 5)',
        'runtime/stores/a.ts imports runtime/b.ts: runtime is above runtime/stores',
        'a circle of imports: runtime/b.ts → runtime/c.ts',
        'examples/app/main.ts: imports tools/up.ts by path; an example imports `toolwarden` as an app does',
        'stale exception: run/x.ts splitLongAgo is no longer over 5 lines (or is gone): remove it from the exceptions',
      ]),
    );
    expect(violations).toHaveLength(6);
    expect(honoured).toEqual(['run/long-allowed.ts:1 allowed is 8 lines (at most 5): named here']);
  });

  it('passes on this repository, printing its exceptions and the longest function outside them', () => {
    const out = execFileSync(process.execPath, ['scripts/check-structure.mjs'], { encoding: 'utf8' });
    expect(out).toMatch(/longest product function outside the exceptions: .+, (\d+) lines/);
    const lines = Number(/outside the exceptions: .+, (\d+) lines/.exec(out)![1]);
    expect(lines).toBeLessThanOrEqual(150);
    expect(out).toMatch(/check-structure: \d+ files, 0 violations, \d+ exceptions/);
  });
});
