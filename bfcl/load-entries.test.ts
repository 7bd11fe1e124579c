import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BFCL_CATEGORIES, categoryLanguage, loadCategory, parseGroundTruth } from './load-entries.ts';
import { sharedBfclDataDir } from './shared-data-suite.ts';

describe('loadCategory on a made-up data folder', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwarden-bfcl-'));
    await mkdir(join(dir, 'possible_answer'));
    await mkdir(join(dir, 'multi_turn_func_doc'));
    const weather = {
      name: 'get_weather',
      description: 'Weather now',
      parameters: { type: 'dict', properties: { city: { type: 'string' } }, required: ['city'] },
    };
    await writeFile(
      join(dir, 'BFCL_v4_simple_python.json'),
      [
        JSON.stringify({
          id: 'simple_python_0',
          question: [[{ role: 'user', content: 'Weather in Oslo?' }]],
          function: [weather],
        }),
        '{"id": "simple_python_1", "question": [[',
        JSON.stringify({
          id: 'simple_python_2',
          question: [[{ role: 'user', content: 'And Rome?' }]],
          function: [weather],
        }),
        JSON.stringify({ question: [] }),
      ].join('\n'),
    );
    await writeFile(
      join(dir, 'possible_answer', 'BFCL_v4_simple_python.json'),
      `${JSON.stringify({ id: 'simple_python_0', ground_truth: [{ get_weather: { city: ['Oslo', 'Oslo, Norway'] } }] })}\n${JSON.stringify({ id: 'simple_python_9', ground_truth: [] })}\n`,
    );
    await writeFile(
      join(dir, 'BFCL_v4_multi_turn_base.json'),
      `${JSON.stringify({
        id: 'multi_turn_base_0',
        question: [[{ role: 'user', content: 'go to temp and sort' }], []],
        involved_classes: ['GorillaFileSystem', 'SpaceshipAPI'],
        missed_function: { '1': ['sort'] },
        excluded_function: ['rm'],
        initial_config: { GorillaFileSystem: { root: {} } },
      })}\n`,
    );
    await writeFile(
      join(dir, 'possible_answer', 'BFCL_v4_multi_turn_base.json'),
      `${JSON.stringify({ id: 'multi_turn_base_0', ground_truth: [["cd(folder='temp')"], ["sort('a.txt')", 'cd(folder=temp)']] })}\n`,
    );
    await writeFile(
      join(dir, 'multi_turn_func_doc', 'gorilla_file_system.json'),
      ['cd', 'sort', 'rm']
        .map((name) =>
          JSON.stringify({
            name,
            description: name,
            parameters: {
              type: 'dict',
              properties: { [name === 'cd' ? 'folder' : 'file_name']: { type: 'string' } },
              required: [],
            },
          }),
        )
        .join('\n'),
    );
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('joins entries with their ground truth and lists every problem without stopping', async () => {
    const result = await loadCategory(dir, 'simple_python');

    expect(result.entries.map((entry) => entry.id)).toEqual(['simple_python_0', 'simple_python_2']);
    expect(result.entries[0]).toMatchObject({
      category: 'simple_python',
      language: 'python',
      turns: [[{ role: 'user', content: 'Weather in Oslo?' }]],
      groundTruth: {
        kind: 'calls',
        calls: [{ name: 'get_weather', args: { city: ['Oslo', 'Oslo, Norway'] } }],
      },
      source: { file: 'BFCL_v4_simple_python.json', line: 1 },
    });
    expect(result.problems.map((problem) => [problem.kind, problem.line, problem.id])).toEqual([
      ['bad_line', 2, undefined],
      ['missing_ground_truth', undefined, 'simple_python_2'],
      ['bad_entry', 4, undefined],
      ['bad_ground_truth', 2, 'simple_python_9'],
    ]);
    expect(result.problems[2]!.message).toContain('an entry needs a string "id"');
  });

  it('reports a missing category file as a problem, not an exception', async () => {
    const result = await loadCategory(dir, 'multiple');

    expect(result.entries).toEqual([]);
    expect(result.problems.map((problem) => problem.kind)).toEqual(['missing_file', 'missing_file']);
    expect(result.problems[0]!.message).toBe(`${join(dir, 'BFCL_v4_multiple.json')}: file not found`);
  });

  it('takes multi-turn docs from the class files, holds out missed functions, and names unknown classes', async () => {
    const result = await loadCategory(dir, 'multi_turn_base');
    const entry = result.entries[0]!;

    expect(entry.functions.map((doc) => doc.name)).toEqual(['cd', 'rm']);
    expect(entry.heldOutFunctions).toEqual([
      { turn: 1, functions: [expect.objectContaining({ name: 'sort' })] },
    ]);
    expect(entry.excludedFunctions).toEqual(['rm']);
    expect(entry.initialConfig).toEqual({ GorillaFileSystem: { root: {} } });
    expect(result.files).toEqual([
      'BFCL_v4_multi_turn_base.json',
      'possible_answer/BFCL_v4_multi_turn_base.json',
      'multi_turn_func_doc/gorilla_file_system.json',
    ]);
    expect(result.problems.map((problem) => problem.kind)).toEqual(['unknown_class', 'bad_ground_truth']);
    expect(result.problems[0]!.message).toContain('unknown API class "SpaceshipAPI"');
    expect(result.problems[1]!.message).toContain('turn 1: "temp" is not a literal');
  });

  it('binds positional multi-turn arguments to the parameters of held-out docs too', async () => {
    const result = await loadCategory(dir, 'multi_turn_base');

    expect(result.entries[0]!.groundTruth).toEqual({
      kind: 'turns',
      turns: [
        [{ name: 'cd', args: { folder: 'temp' }, source: "cd(folder='temp')" }],
        [{ name: 'sort', args: { file_name: 'a.txt' }, source: "sort('a.txt')" }],
      ],
    });
  });
});

describe('parseGroundTruth', () => {
  it('reads a list of strings as acceptable final answers (memory, web search)', () => {
    expect(parseGroundTruth(['35', 'thirty five'], [])).toEqual({
      ok: true,
      value: { kind: 'answers', answers: ['35', 'thirty five'] },
      problems: [],
    });
  });

  it('refuses a single-turn call whose arguments are not lists of acceptable values', () => {
    expect(parseGroundTruth([{ f: { a: 1 } }], [])).toMatchObject({ ok: false });
  });
});

describe('categoryLanguage', () => {
  it('tells Java from JavaScript as upstream is_java / is_js do', () => {
    expect([
      categoryLanguage('simple_java'),
      categoryLanguage('simple_javascript'),
      categoryLanguage('multiple'),
    ]).toEqual(['java', 'javascript', 'python']);
  });
});

const dataDir = sharedBfclDataDir('bfcl/load-entries (real BFCL categories)');

describe.skipIf(!dataDir)('loadCategory on the real BFCL v4 files', () => {
  const expected: Record<string, { entries: number; groundTruth: string | undefined; noTools?: number }> = {
    simple_python: { entries: 400, groundTruth: 'calls' },
    simple_java: { entries: 100, groundTruth: 'calls' },
    simple_javascript: { entries: 50, groundTruth: 'calls' },
    multiple: { entries: 200, groundTruth: 'calls' },
    parallel: { entries: 200, groundTruth: 'calls' },
    parallel_multiple: { entries: 200, groundTruth: 'calls' },
    irrelevance: { entries: 240, groundTruth: undefined },
    live_simple: { entries: 258, groundTruth: 'calls' },
    live_multiple: { entries: 1053, groundTruth: 'calls' },
    live_parallel: { entries: 16, groundTruth: 'calls' },
    live_parallel_multiple: { entries: 24, groundTruth: 'calls' },
    // Four live_irrelevance entries offer no function at all: the model should just answer.
    live_irrelevance: { entries: 884, groundTruth: undefined, noTools: 4 },
    live_relevance: { entries: 16, groundTruth: undefined },
    multi_turn_base: { entries: 200, groundTruth: 'turns' },
    multi_turn_miss_func: { entries: 200, groundTruth: 'turns' },
    multi_turn_miss_param: { entries: 200, groundTruth: 'turns' },
    multi_turn_long_context: { entries: 200, groundTruth: 'turns' },
    memory: { entries: 155, groundTruth: 'answers' },
    web_search: { entries: 100, groundTruth: 'answers' },
  };

  it('knows every category that has a file', () => {
    expect([...BFCL_CATEGORIES].sort()).toEqual(Object.keys(expected).sort());
  });

  it.each(Object.entries(expected))(
    'loads %s without a problem',
    async (category, { entries, groundTruth, noTools }) => {
      const result = await loadCategory(dataDir!, category);

      expect(result.problems).toEqual([]);
      expect(result.entries).toHaveLength(entries);
      expect(new Set(result.entries.map((entry) => entry.groundTruth?.kind))).toEqual(new Set([groundTruth]));
      expect(result.entries.filter((entry) => entry.functions.length === 0)).toHaveLength(noTools ?? 0);
    },
  );

  it('gives multi_turn_miss_func_0 the file system and Twitter docs, with sort held out until turn 3', async () => {
    const result = await loadCategory(dataDir!, 'multi_turn_miss_func');
    const entry = result.entries.find((e) => e.id === 'multi_turn_miss_func_0')!;

    expect(entry.involvedClasses).toEqual(['TwitterAPI', 'GorillaFileSystem']);
    expect(entry.functions).toHaveLength(14 + 18 - 1);
    expect(entry.functions.some((doc) => doc.name === 'sort')).toBe(false);
    expect(entry.heldOutFunctions.map((h) => [h.turn, h.functions.map((doc) => doc.name)])).toEqual([
      [3, ['sort']],
    ]);
    expect(entry.turns[3]).toEqual([]);
    expect(entry.groundTruth?.kind === 'turns' && entry.groundTruth.turns[3]).toEqual([
      { name: 'sort', args: { file_name: 'final_report.pdf' }, source: "sort('final_report.pdf')" },
    ]);
  });

  it('stands the memory backend chosen for MemoryAPI', async () => {
    const kv = await loadCategory(dataDir!, 'memory');
    const vector = await loadCategory(dataDir!, 'memory', { memoryBackend: 'vector' });

    expect(kv.files).toContain('multi_turn_func_doc/memory_kv.json');
    expect(kv.entries[0]!.functions).toHaveLength(15);
    expect(vector.entries[0]!.functions).toHaveLength(12);
  });
});
