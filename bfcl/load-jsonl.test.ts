import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadJsonLines, MAX_LINE_PROBLEMS, parseJsonLines } from './load-jsonl.ts';
import { sharedBfclDataDir } from './shared-data-suite.ts';

describe('loadJsonLines', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwarden-jsonl-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps every good line and reports a broken one with file, line number and parser message', async () => {
    const file = join(dir, 'broken.json');
    await writeFile(file, '{"id": "a_0"}\n{"id": "a_1", "question": [[\n{"id": "a_2"}\n');

    const result = await loadJsonLines(file);

    expect(result.records).toEqual([
      { line: 1, value: { id: 'a_0' } },
      { line: 3, value: { id: 'a_2' } },
    ]);
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]).toMatchObject({ kind: 'bad_line', file, line: 2 });
    expect(result.problems[0]!.message).toMatch(new RegExp(`^${escapeRegExp(file)}:2: not JSON: .*JSON`));
  });

  it('reports a missing file as missing_file and returns no records', async () => {
    const file = join(dir, 'absent.json');

    const result = await loadJsonLines(file);

    expect(result).toEqual({
      file,
      records: [],
      problems: [{ kind: 'missing_file', file, message: `${file}: file not found` }],
      badLines: 0,
    });
  });

  it('reports a path it cannot read (a folder) as unreadable_file with the system error', async () => {
    const folder = join(dir, 'a-folder.json');
    await mkdir(folder);

    const result = await loadJsonLines(folder);

    expect(result.records).toEqual([]);
    expect(result.problems).toMatchObject([{ kind: 'unreadable_file', file: folder }]);
    expect(result.problems[0]!.message).toContain('EISDIR');
  });

  it('says "not JSON Lines" for one pretty-printed JSON object instead of a line error per line', () => {
    const text = '{\n  "simple_python": ["simple_python_1"],\n  "multiple": ["multiple_3"]\n}\n';

    const result = parseJsonLines(text, 'map.json');

    expect(result.records).toEqual([]);
    expect(result.problems).toEqual([
      {
        kind: 'not_json_lines',
        file: 'map.json',
        message:
          'not JSON Lines: map.json is one JSON object spread over 4 lines, not one JSON value per line',
      },
    ]);
  });

  it('skips blank lines, accepts CRLF and a byte-order mark, and keeps original line numbers', () => {
    const result = parseJsonLines('\uFEFF{"a": 1}\r\n\r\n{"a": 2}\r\n', 'crlf.json');

    expect(result.problems).toEqual([]);
    expect(result.records).toEqual([
      { line: 1, value: { a: 1 } },
      { line: 3, value: { a: 2 } },
    ]);
  });

  it(`lists the first ${MAX_LINE_PROBLEMS} bad lines and sums up the rest in one problem`, () => {
    const text = Array.from({ length: 25 }, (_, i) => `{"n": ${i}`).join('\n');

    const result = parseJsonLines(text, 'many.json');

    expect(result.problems).toHaveLength(MAX_LINE_PROBLEMS + 1);
    expect(result.problems[MAX_LINE_PROBLEMS]!.message).toBe(
      `many.json: 5 more lines are not JSON (first ${MAX_LINE_PROBLEMS} listed)`,
    );
  });
});

const dataDir = sharedBfclDataDir('bfcl/load-jsonl (real BFCL files)');

describe.skipIf(!dataDir)('loadJsonLines on the real BFCL files', () => {
  it('says BFCL_v4_format_sensitivity.json is not JSON Lines, naming the file', async () => {
    const file = join(dataDir!, 'BFCL_v4_format_sensitivity.json');

    const result = await loadJsonLines(file);

    expect(result.records).toEqual([]);
    expect(result.problems).toEqual([
      {
        kind: 'not_json_lines',
        file,
        message: `not JSON Lines: ${file} is one JSON object spread over 10 lines, not one JSON value per line`,
      },
    ]);
  });

  it('reads BFCL_v4_simple_python.json as 400 entries without a problem', async () => {
    const result = await loadJsonLines(join(dataDir!, 'BFCL_v4_simple_python.json'));

    expect(result.problems).toEqual([]);
    expect(result.records).toHaveLength(400);
    expect(result.records[0]!.value).toMatchObject({ id: 'simple_python_0' });
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
