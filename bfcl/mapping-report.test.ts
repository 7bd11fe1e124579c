import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatMappingReport, type MappingReport, mappingReport } from './mapping-report.ts';
import { sharedBfclDataDir } from './shared-data-suite.ts';

describe('mappingReport on a made-up folder', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwarden-report-'));
    await mkdir(join(dir, 'multi_turn_func_doc'));
    const fn = (name: string, properties: object) => ({
      name,
      description: name,
      parameters: { type: 'dict', properties },
    });
    await writeFile(
      join(dir, 'BFCL_v4_simple_python.json'),
      `${JSON.stringify({ id: 'simple_python_0', question: [], function: [fn('a', { x: { type: 'integer' } }), fn('b', { y: { type: 'boolean', enum: ['True', 'False'] } })] })}\n{broken\n`,
    );
    await writeFile(
      join(dir, 'multi_turn_func_doc', 'math_api.json'),
      `${JSON.stringify(fn('c', { z: { type: 'any' } }))}\n`,
    );
    await writeFile(join(dir, 'BFCL_v4_format_sensitivity.json'), '{\n  "simple_python": []\n}\n');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('counts each doc as exact or approximate, tallies reasons, and lists unreadable input as problems', async () => {
    const report = await mappingReport(dir);

    expect(report.totals).toEqual({ docs: 3, exact: 2, approximate: 1, failed: 0 });
    expect(report.files['BFCL_v4_simple_python.json']).toEqual({
      docs: 2,
      exact: 1,
      approximate: 1,
      failed: 0,
      language: 'python',
    });
    expect(report.approximations).toEqual({
      enum_type_conflict: {
        docs: 1,
        occurrences: 1,
        example: expect.stringMatching(/^BFCL_v4_simple_python\.json: b\.y: /),
      },
    });
    expect(report.notes.any_as_string).toMatchObject({ docs: 1, occurrences: 1 });
    expect(report.problems.map((problem) => problem.kind)).toEqual(['not_json_lines', 'bad_line']);
    expect(formatMappingReport(report)).toContain('3 docs: 2 exact, 1 approximate, 0 failed');
  });
});

const dataDir = sharedBfclDataDir('bfcl/mapping-report (all 8,888 real BFCL function docs)');

describe.skipIf(!dataDir)('mappingReport over every BFCL v4 function doc', () => {
  let sourceText: MappingReport;
  let native: MappingReport;
  beforeAll(async () => {
    [sourceText, native] = await Promise.all([
      mappingReport(dataDir!),
      mappingReport(dataDir!, { argumentForm: 'native', filter: (file) => file.includes('_java') }),
    ]);
    console.log(formatMappingReport(sourceText));
  }, 120_000);

  it('maps all 8,888 docs (8,726 in the category files, 162 in multi_turn_func_doc) without a failure', () => {
    const sum = (prefix: string) =>
      Object.entries(sourceText.files)
        .filter(([file]) => file.startsWith(prefix))
        .reduce((total, [, counts]) => total + counts.docs, 0);

    expect(sourceText.failures).toEqual([]);
    expect(sourceText.totals).toEqual({ docs: 8888, exact: 8494, approximate: 394, failed: 0 });
    expect(sum('BFCL_v4_')).toBe(8726);
    expect(sum('multi_turn_func_doc/')).toBe(162);
  });

  it('reports BFCL_v4_format_sensitivity.json as the one file that is not JSON Lines', () => {
    expect(sourceText.problems.map((problem) => [problem.kind, problem.file])).toEqual([
      ['not_json_lines', join(dataDir!, 'BFCL_v4_format_sensitivity.json')],
    ]);
  });

  it('gives the reasons for every approximate doc, counted in docs', () => {
    const docs = (report: MappingReport['approximations']) =>
      Object.fromEntries(Object.entries(report).map(([code, count]) => [code, count!.docs]));

    expect(docs(sourceText.approximations)).toEqual({
      default_outside_schema: 317,
      enum_type_conflict: 80,
      array_enum_on_items: 22,
      default_on_items: 2,
      item_count_moved_to_array: 1,
      optional_but_required: 1,
      required_undeclared: 1,
    });
    expect(Object.keys(native.files)).toEqual(['BFCL_v4_simple_java.json', 'BFCL_v4_simple_javascript.json']);
    expect(docs(native.approximations)).toEqual({
      any_unconstrained: 95,
      long_as_integer: 6,
      char_as_single_character_string: 1,
      unknown_type: 1,
    });
  });

  it('maps the Java and JavaScript docs exactly in the source-text form, as BFCL prompts models', () => {
    expect(sourceText.files['BFCL_v4_simple_java.json']).toMatchObject({ docs: 100, exact: 100 });
    expect(sourceText.files['BFCL_v4_simple_javascript.json']).toMatchObject({ docs: 50, exact: 50 });
    expect(native.files['BFCL_v4_simple_java.json']).toMatchObject({ docs: 100, exact: 26, approximate: 74 });
    expect(sourceText.notes.source_text_arguments?.docs).toBe(150);
  });

  it('maps every multi-turn API doc exactly', () => {
    const multiTurn = Object.entries(sourceText.files).filter(([file]) =>
      file.startsWith('multi_turn_func_doc/'),
    );

    expect(multiTurn).toHaveLength(12);
    expect(multiTurn.every(([, counts]) => counts.exact === counts.docs)).toBe(true);
  });
});
