import { afterAll, describe, expect, it } from 'vitest';
import { prepareToolCall } from '../tools/index.ts';
import type { BfclEntry, BfclFunctionDoc } from './bfcl-types.ts';
import { type EntryTool, entryTools, groundTruthToolCalls } from './entry-tools.ts';
import { groundTruthToolCall, multiTurnToolCall, type OptionalArguments } from './ground-truth-call.ts';
import { type GroundTruthQuirk, quirksFor } from './ground-truth-quirks.ts';
import { loadCategory } from './load-entries.ts';
import { type ArgumentForm, mapFunctionDoc } from './map-function-doc.ts';
import { sharedBfclDataDir } from './shared-data-suite.ts';

const drink: BfclFunctionDoc = {
  name: 'ChaDri.change_drink',
  description: 'Changes a drink order.',
  parameters: {
    type: 'dict',
    required: ['drink_id'],
    properties: {
      drink_id: { type: 'string' },
      unit: { type: 'string', enum: ['celsius', 'fahrenheit'], default: 'celsius' },
      new_preferences: {
        type: 'dict',
        properties: { size: { type: 'string' }, special_instructions: { type: 'string' } },
      },
      items: { type: 'array', items: { type: 'dict', properties: { sku: { type: 'string' } } } },
    },
  },
};

describe('groundTruthToolCall', () => {
  const mapping = mapFunctionDoc(drink);

  it('takes the first acceptable value of each argument and the mapped tool id', () => {
    const call = groundTruthToolCall(
      { name: drink.name, args: { drink_id: ['latte', 'Latte'] } },
      drink,
      mapping,
    );

    expect(call).toEqual({ name: 'bfcl.ChaDri.change_drink', input: { drink_id: 'latte' } });
  });

  it('sends the first other value where "" allows leaving an argument out, or leaves it out when asked', () => {
    const gt = { name: drink.name, args: { drink_id: ['1234'], unit: ['', 'fahrenheit'], size: [''] } };

    expect(groundTruthToolCall(gt, drink, mapping).input).toEqual({ drink_id: '1234', unit: 'fahrenheit' });
    expect(groundTruthToolCall(gt, drink, mapping, { optional: 'omit' }).input).toEqual({ drink_id: '1234' });
  });

  it('reads dict values, alone or in lists, as lists of acceptable values per field', () => {
    const gt = {
      name: drink.name,
      args: {
        drink_id: ['latte'],
        new_preferences: [{ size: ['large'], special_instructions: ['', 'boiling hot'] }],
        items: [[{ sku: ['A1', 'a1'] }, { sku: ['B2'] }]],
      },
    };

    expect(groundTruthToolCall(gt, drink, mapping).input).toEqual({
      drink_id: 'latte',
      new_preferences: { size: 'large', special_instructions: 'boiling hot' },
      items: [{ sku: 'A1' }, { sku: 'B2' }],
    });
    expect(groundTruthToolCall(gt, drink, mapping, { optional: 'omit' }).input.new_preferences).toEqual({
      size: 'large',
    });
  });

  it('writes Java arguments as Java source text in the source-text form', () => {
    const doc: BfclFunctionDoc = {
      name: 'PmsProductCategoryController.updateShowStatus',
      parameters: {
        type: 'dict',
        properties: {
          ids: { type: 'ArrayList', items: { type: 'integer' } },
          showStatus: { type: 'integer' },
        },
        required: ['ids', 'showStatus'],
      },
    };
    const javaMapping = mapFunctionDoc(doc, { language: 'java' });

    expect(
      groundTruthToolCall(
        { name: doc.name, args: { ids: [[101, 102, 103]], showStatus: [0] } },
        doc,
        javaMapping,
      ).input,
    ).toEqual({ ids: 'new ArrayList<>(Arrays.asList(101, 102, 103))', showStatus: '0' });
  });

  it('turns a parsed multi-turn call into a tool call', () => {
    expect(
      multiTurnToolCall({ name: 'mv', args: { source: 'a.pdf', destination: 'temp' }, source: '' }),
    ).toEqual({
      name: 'bfcl.mv',
      input: { source: 'a.pdf', destination: 'temp' },
    });
  });
});

const dataDir = sharedBfclDataDir('bfcl/ground-truth-call (ground truth of the real BFCL categories)');

const SINGLE_TURN = [
  'live_simple',
  'live_multiple',
  'simple_python',
  'multiple',
  'parallel',
  'simple_java',
  'simple_javascript',
  'parallel_multiple',
  'live_parallel',
  'live_parallel_multiple',
];
const MULTI_TURN = [
  'multi_turn_base',
  'multi_turn_miss_func',
  'multi_turn_miss_param',
  'multi_turn_long_context',
];

interface Rejection {
  reason: string;
  fields: string[];
}
interface Acceptance {
  total: number;
  rejected: Map<string, Rejection>;
  entryIds: Set<string>;
}

/** One tool cache per form: tools are immutable and the multi-turn entries share their docs. */
const caches = { 'source-text': new Map<string, EntryTool>(), native: new Map<string, EntryTool>() };

/** Validates every ground-truth call of a category through prepareToolCall. */
async function acceptance(
  category: string,
  optional: OptionalArguments,
  form: ArgumentForm,
): Promise<Acceptance> {
  const { entries, problems } = await loadCategory(dataDir!, category);
  expect(problems).toEqual([]);
  const rejected = new Map<string, Rejection>();
  let total = 0;
  for (const entry of entries) {
    const tools = entryTools(entry, { argumentForm: form, cache: caches[form] });
    for (const { key, call } of groundTruthToolCalls(entry, tools, { optional })) {
      total++;
      const prepared = prepareToolCall(tools.catalog, { ...call, toolCallId: key });
      if (!prepared.ok) {
        const hint = prepared.result.retryHint!;
        rejected.set(key, {
          reason: hint.reason,
          fields: [...new Set(hint.issues?.map((issue) => issue.path))].sort(),
        });
      }
    }
  }
  return { total, rejected, entryIds: new Set(entries.map((entry: BfclEntry) => entry.id)) };
}

const expectedRejections = (
  quirks: readonly GroundTruthQuirk[],
  entryIds: Set<string>,
): Map<string, Rejection> =>
  new Map(
    quirks
      .filter((quirk) => entryIds.has(quirk.call.split(/[#@]/)[0]!))
      .map((quirk) => [quirk.call, { reason: quirk.reason, fields: [...quirk.fields].sort() }]),
  );

describe.skipIf(!dataDir)('ground truth of the real BFCL categories through the tool boundary', () => {
  const rates: string[] = [];
  afterAll(() => {
    if (rates.length > 0) console.log(`Ground-truth acceptance by prepareToolCall:\n${rates.join('\n')}`);
  });

  for (const optional of ['include', 'omit'] as const) {
    it.each([...SINGLE_TURN, ...MULTI_TURN])(
      `accepts every call of %s (optional arguments: ${optional}) except the named quirks`,
      async (category) => {
        const result = await acceptance(category, optional, 'source-text');
        const expected = expectedRejections(quirksFor(optional), result.entryIds);
        const accepted = result.total - result.rejected.size;
        rates.push(
          `  ${category.padEnd(24)} ${optional.padEnd(8)} ${accepted}/${result.total} = ${((100 * accepted) / result.total).toFixed(2)}%`,
        );

        expect(Object.fromEntries(result.rejected)).toEqual(Object.fromEntries(expected));
      },
      60_000,
    );
  }

  it.each(['simple_java', 'simple_javascript'])(
    'accepts every call of %s in the native Java/JS form except variables given for literals',
    async (category) => {
      const result = await acceptance(category, 'include', 'native');
      const expected = expectedRejections(quirksFor('include', 'native'), result.entryIds);
      const accepted = result.total - result.rejected.size;
      rates.push(
        `  ${category.padEnd(24)} native   ${accepted}/${result.total} = ${((100 * accepted) / result.total).toFixed(2)}%`,
      );

      expect(Object.fromEntries(result.rejected)).toEqual(Object.fromEntries(expected));
    },
  );
});
