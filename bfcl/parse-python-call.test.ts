import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bindPositional, PythonCallSyntaxError, parsePythonCall } from './parse-python-call.ts';
import { sharedBfclDataDir } from './shared-data-suite.ts';

describe('parsePythonCall', () => {
  it('reads keyword arguments with single- and double-quoted strings', () => {
    expect(parsePythonCall(`mv(source='final_report.pdf', destination="temp")`)).toEqual({
      name: 'mv',
      args: { source: 'final_report.pdf', destination: 'temp' },
      positional: [],
    });
  });

  it('reads numbers, booleans, None, lists, dicts and tuples as JSON values', () => {
    const call = parsePythonCall(
      "f(a=20, b=-3.5, c=1e-3, d=True, e=False, g=None, h=['@Julia', 2], i={'priority': 2, 'x': [1]}, j=(1, 2), k=(3,), l=())",
    );

    expect(call.args).toEqual({
      a: 20,
      b: -3.5,
      c: 0.001,
      d: true,
      e: false,
      g: null,
      h: ['@Julia', 2],
      i: { priority: 2, x: [1] },
      j: [1, 2],
      k: [3],
      l: [],
    });
  });

  it('decodes Python escapes and joins adjacent string literals', () => {
    const call = parsePythonCall(
      String.raw`post(content='line 1\nIt\'s "quoted" \u00e9\x41' ' and more', raw=r'a\nb')`,
    );

    expect(call.args).toEqual({ content: `line 1\nIt's "quoted" éA and more`, raw: 'a\\nb' });
  });

  it('keeps positional arguments apart, in order', () => {
    expect(parsePythonCall("sort('final_report.pdf')")).toEqual({
      name: 'sort',
      args: {},
      positional: ['final_report.pdf'],
    });
  });

  it('reads dotted names and a trailing comma', () => {
    expect(parsePythonCall('math.sqrt(x=4,)')).toEqual({ name: 'math.sqrt', args: { x: 4 }, positional: [] });
  });

  it('keeps a "__proto__" dict key as data, not as a prototype', () => {
    const call = parsePythonCall("f(d={'__proto__': {'polluted': 1}})");
    const dict = call.args.d as Record<string, unknown>;

    expect(Object.getPrototypeOf(dict)).toBe(Object.prototype);
    expect(Object.keys(dict)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([
    ['cd(folder=document)', '"document" is not a literal'],
    ["cd(folder='document'", 'expected ","'],
    ["cd(folder='doc)", 'unterminated string'],
    ['cd(a=1, a=2)', 'keyword argument "a" repeated'],
    ["cd(folder='x', 'y')", 'positional argument after keyword argument'],
    ["cd(folder='x') extra", 'unexpected text after the call'],
  ])('rejects %s: %s', (source, message) => {
    expect(() => parsePythonCall(source)).toThrowError(PythonCallSyntaxError);
    expect(() => parsePythonCall(source)).toThrowError(message);
  });
});

describe('bindPositional', () => {
  it("names positional arguments after the doc's parameters, in order", () => {
    const call = parsePythonCall("sort('final_report.pdf')");

    expect(bindPositional(call, ['file_name'])).toEqual({ file_name: 'final_report.pdf' });
  });

  it('refuses more positional arguments than parameters', () => {
    const call = parsePythonCall("pwd('x')");

    expect(() => bindPositional(call, [])).toThrowError(
      'pwd takes 0 parameters but 1 were given by position',
    );
  });
});

const dataDir = sharedBfclDataDir('bfcl/parse-python-call (real multi-turn ground truth)');

describe.skipIf(!dataDir)('parsePythonCall on every multi-turn ground-truth call', () => {
  it.each(['multi_turn_base', 'multi_turn_miss_func', 'multi_turn_miss_param', 'multi_turn_long_context'])(
    'parses every call of %s',
    async (category) => {
      const text = await readFile(join(dataDir!, 'possible_answer', `BFCL_v4_${category}.json`), 'utf8');
      const calls = text
        .split('\n')
        .filter((line) => line.trim())
        .flatMap((line) => (JSON.parse(line).ground_truth as string[][]).flat());

      const parsed = calls.map((source) => parsePythonCall(source));

      expect(calls.length).toBeGreaterThan(1000);
      expect(parsed.every((call) => /^[A-Za-z_]\w*$/.test(call.name))).toBe(true);
    },
  );
});
