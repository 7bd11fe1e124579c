import { describe, expect, it } from 'vitest';
import type { BfclEntry, BfclFunctionDoc } from './bfcl-types.ts';
import { type EntryTool, entryTools, groundTruthToolCalls } from './entry-tools.ts';

const doc = (name: string, param: string): BfclFunctionDoc => ({
  name,
  description: name,
  parameters: { type: 'dict', properties: { [param]: { type: 'string' } }, required: [param] },
});

const entry = (overrides: Partial<BfclEntry>): BfclEntry => ({
  id: 'multi_turn_miss_func_0',
  category: 'multi_turn_miss_func',
  language: 'python',
  turns: [[{ role: 'user', content: 'go to temp' }], [], [{ role: 'user', content: 'sort it' }]],
  functions: [doc('cd', 'folder')],
  heldOutFunctions: [{ turn: 1, functions: [doc('sort', 'file_name')] }],
  excludedFunctions: [],
  involvedClasses: ['GorillaFileSystem'],
  source: { file: 'BFCL_v4_multi_turn_miss_func.json', line: 1 },
  ...overrides,
});

describe('entryTools', () => {
  it('makes a tool of every doc, held-out ones included, findable by BFCL name', () => {
    const tools = entryTools(entry({}));

    expect(tools.catalog.ids).toEqual(['bfcl.cd', 'bfcl.sort']);
    expect(tools.byName.get('sort')?.tool.id).toBe('bfcl.sort');
  });

  it('reuses the tools of identical docs through a shared cache', () => {
    const cache = new Map<string, EntryTool>();

    const first = entryTools(entry({}), { cache });
    const second = entryTools(entry({ id: 'multi_turn_miss_func_1' }), { cache });

    expect(second.tools[0]!.tool).toBe(first.tools[0]!.tool);
    expect(cache.size).toBe(2);
  });
});

describe('groundTruthToolCalls', () => {
  it('keys multi-turn calls <id>@<turn>.<index> and points each at its tool', () => {
    const e = entry({
      groundTruth: {
        kind: 'turns',
        turns: [
          [{ name: 'cd', args: { folder: 'temp' }, source: "cd(folder='temp')" }],
          [],
          [{ name: 'sort', args: { file_name: 'a.txt' }, source: "sort('a.txt')" }],
        ],
      },
    });
    const tools = entryTools(e);

    expect(
      groundTruthToolCalls(e, tools).map(({ key, turn, call, tool }) => [key, turn, call, tool?.id]),
    ).toEqual([
      ['multi_turn_miss_func_0@0.0', 0, { name: 'bfcl.cd', input: { folder: 'temp' } }, 'bfcl.cd'],
      ['multi_turn_miss_func_0@2.0', 2, { name: 'bfcl.sort', input: { file_name: 'a.txt' } }, 'bfcl.sort'],
    ]);
  });

  it('keys single-turn calls <id>#<index>, choosing values as groundTruthToolCall does', () => {
    const e = entry({
      id: 'parallel_0',
      groundTruth: {
        kind: 'calls',
        calls: [
          { name: 'cd', args: { folder: ['docs', 'Docs'] } },
          { name: 'cd', args: { folder: ['', 'tmp'] } },
        ],
      },
    });

    expect(
      groundTruthToolCalls(e, entryTools(e), { optional: 'include' }).map(({ key, call }) => [
        key,
        call.input,
      ]),
    ).toEqual([
      ['parallel_0#0', { folder: 'docs' }],
      ['parallel_0#1', { folder: 'tmp' }],
    ]);
  });

  it('has no calls for an entry whose ground truth is a final answer', () => {
    const e = entry({ groundTruth: { kind: 'answers', answers: ['Seattle'] } });

    expect(groundTruthToolCalls(e, entryTools(e))).toEqual([]);
  });
});
