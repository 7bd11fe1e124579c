import { afterAll, describe, expect, it } from 'vitest';
import { callTool, type Tool, type ToolCallMeta, ToolCatalog, type ToolResult } from '../tools/index.ts';
import type { BfclFunctionDoc } from './bfcl-types.ts';
import { type EntryTool, entryTools, groundTruthToolCalls } from './entry-tools.ts';
import { loadCategory } from './load-entries.ts';
import { toolFromFunctionDoc } from './map-function-doc.ts';
import {
  applicableMistakes,
  applyMistake,
  chooseMistake,
  EXPECTED_REASON,
  MISTAKE_KINDS,
  type Mistake,
  type MistakeKind,
  MistakeNotApplicableError,
  type MistakeTarget,
  makeMistake,
} from './mistake-model.ts';
import { sharedBfclDataDir } from './shared-data-suite.ts';
import { withFaultOnce } from './with-fault-once.ts';

const weatherDoc: BfclFunctionDoc = {
  name: 'get_current_weather',
  description: 'Current weather of a city.',
  parameters: {
    type: 'dict',
    required: ['location', 'days'],
    properties: {
      location: { type: 'string' },
      days: { type: 'integer' },
      unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    },
  },
};
const forecastDoc: BfclFunctionDoc = { ...weatherDoc, name: 'get_forecast' };

const build = (doc: BfclFunctionDoc): Tool =>
  toolFromFunctionDoc(doc, { timeoutMs: 20, execute: (input: unknown) => ({ echoed: input }) }).tool;

const weather = build(weatherDoc);
const forecast = build(forecastDoc);
const target: MistakeTarget = {
  key: 'live_simple_4-3-0#0',
  call: { name: weather.id, input: { location: 'Tel Aviv, Israel', days: 3, unit: 'fahrenheit' } },
  tool: weather,
  toolIds: [weather.id, forecast.id],
};

const meta = (toolCallId: string): ToolCallMeta => ({
  runId: 'run-1',
  turnId: 'turn-1',
  toolCallId,
  agentId: 'bfcl',
  attempt: 1,
});

/** Sends a mistake through the real boundary, with the tool faulted when the mistake says so. */
async function throughBoundary(mistake: Mistake, tools: Tool[], faulted: string): Promise<ToolResult> {
  const catalog = new ToolCatalog(
    tools.map((tool) => (tool.id === faulted && mistake.fault ? withFaultOnce(tool, mistake.fault) : tool)),
  );
  return callTool(catalog, { ...mistake.call, toolCallId: 'call-1' }, { meta: meta('call-1') });
}

describe('the mistake model on one call', () => {
  it('lists the kinds that apply to the call', () => {
    expect(applicableMistakes(target)).toEqual([...MISTAKE_KINDS]);
    expect(
      applicableMistakes({ ...target, call: { name: weather.id, input: { location: 'Oslo', days: 1 } } }),
    ).not.toContain('enum_wrong_case');
  });

  it.each<[MistakeKind, unknown, string]>([
    ['none', { location: 'Tel Aviv, Israel', days: 3, unit: 'fahrenheit' }, 'the correct call'],
    ['missing_required', { location: 'Tel Aviv, Israel', unit: 'fahrenheit' }, 'removed required "days"'],
    ['number_as_string', { location: 'Tel Aviv, Israel', days: '3', unit: 'fahrenheit' }, 'days: 3 → "3"'],
    [
      'enum_wrong_case',
      { location: 'Tel Aviv, Israel', days: 3, unit: 'FAHRENHEIT' },
      'unit: "fahrenheit" → "FAHRENHEIT"',
    ],
    [
      'truncated_json',
      '{"location":"Tel Aviv, Israel","days":3,"unit":',
      'JSON text cut to 47 of 60 characters',
    ],
  ])('%s (seed 7) changes the call as described', (kind, input, detail) => {
    const mistake = applyMistake(target, kind, 7);

    expect(mistake).toMatchObject({
      kind,
      expectedReason: EXPECTED_REASON[kind],
      detail,
      call: { name: weather.id, input },
    });
  });

  it('adds one made-up argument the tool does not declare', () => {
    const mistake = applyMistake(target, 'unknown_argument', 7);
    const input = mistake.call.input as Record<string, unknown>;
    const added = Object.keys(input).filter((key) => !(key in target.call.input));

    expect(added).toHaveLength(1);
    expect(['verbose', 'format', 'limit', 'timeout', 'language', 'api_key', 'debug', 'retries']).toContain(
      added[0],
    );
    expect(mistake.detail).toBe(`added unknown "${added[0]}": ${JSON.stringify(input[added[0]!])}`);
  });

  it('marks timeout_once and rate_limited_once as correct calls with a fault on the first execution', () => {
    expect(applyMistake(target, 'timeout_once', 7)).toMatchObject({ call: target.call, fault: 'timeout' });
    expect(applyMistake(target, 'rate_limited_once', 7)).toMatchObject({
      call: target.call,
      fault: 'rate_limited',
    });
  });

  it('makes a hallucinated tool name one typo or plural away, never a real tool', () => {
    const names = new Set(
      Array.from({ length: 40 }, (_, seed) => applyMistake(target, 'hallucinated_tool', seed).call.name),
    );

    expect(names.size).toBeGreaterThan(5);
    expect(names.has(weather.id)).toBe(false);
    expect(names.has(forecast.id)).toBe(false);
    expect(
      [...names].every((name) => name.startsWith('bfcl.') && Math.abs(name.length - weather.id.length) <= 1),
    ).toBe(true);
  });

  it('gives the same mistake for the same seed and call, and varies with the seed', () => {
    const first = makeMistake(target, 2024);
    const again = makeMistake(target, 2024);
    const kinds = new Set(Array.from({ length: 200 }, (_, seed) => chooseMistake(target, seed)));

    expect(again).toEqual(first);
    expect(kinds).toEqual(new Set(MISTAKE_KINDS));
  });

  it('chooses only among the kinds asked for', () => {
    const kinds = new Set(
      Array.from({ length: 50 }, (_, seed) =>
        chooseMistake(target, seed, { kinds: ['timeout_once', 'enum_wrong_case'] }),
      ),
    );

    expect(kinds).toEqual(new Set(['timeout_once', 'enum_wrong_case']));
  });

  it('refuses a kind that does not apply, saying which do', () => {
    const noEnum = { ...target, call: { name: weather.id, input: { location: 'Oslo', days: 1 } } };

    expect(() => applyMistake(noEnum, 'enum_wrong_case', 1)).toThrowError(MistakeNotApplicableError);
    expect(() => applyMistake(noEnum, 'enum_wrong_case', 1)).toThrowError(
      /applicable: none, missing_required/,
    );
  });

  it('offers only the mistakes decided before validation when the correct call is itself invalid', () => {
    const broken = { ...target, call: { name: weather.id, input: { location: 'Oslo' } } };

    expect(applicableMistakes(broken)).toEqual(['hallucinated_tool', 'truncated_json']);
  });

  it.each([...MISTAKE_KINDS])('%s gets its expected RetryReason from the real boundary', async (kind) => {
    const mistake = applyMistake(target, kind, 11);

    const result = await throughBoundary(mistake, [weather, forecast], weather.id);

    expect(result.retryHint?.reason).toBe(EXPECTED_REASON[kind]);
    if (kind === 'none')
      expect(result).toMatchObject({ executed: true, result: { echoed: target.call.input } });
  });
});

const dataDir = sharedBfclDataDir('bfcl/mistake-model (real BFCL ground truth)');

/** Tools are immutable: build each distinct doc once (multi-turn entries share docs). */
const cache = new Map<string, EntryTool>();

describe.skipIf(!dataDir)('hint-reason accuracy of the mistake model over real BFCL calls', () => {
  const tally = new Map<string, { right: number; total: number }>();
  afterAll(() => {
    if (tally.size === 0) return;
    const all = [...tally.values()].reduce((a, b) => ({
      right: a.right + b.right,
      total: a.total + b.total,
    }));
    const lines = [...tally].map(([kind, { right, total }]) => `  ${kind.padEnd(18)} ${right}/${total}`);
    console.log(
      `Mistake model: boundary reason = expected reason in ${all.right}/${all.total} calls\n${lines.join('\n')}`,
    );
  });

  it.each([
    'live_simple',
    'live_multiple',
    'simple_python',
    'multiple',
    'parallel',
    'simple_java',
    'simple_javascript',
    'multi_turn_base',
  ])(
    'every applicable mistake on every ground-truth call of %s gets its expected reason',
    async (category) => {
      const { entries } = await loadCategory(dataDir!, category);
      const outcomes: Promise<{ kind: MistakeKind; ok: boolean; why: string }>[] = [];
      for (const entry of entries) {
        const tools = entryTools(entry, { timeoutMs: 5, execute: () => ({ ok: true }), cache });
        const targets: MistakeTarget[] = groundTruthToolCalls(entry, tools).map(({ key, call, tool }) => ({
          key,
          call,
          tool: tool!,
          toolIds: tools.catalog.ids,
        }));
        for (const one of targets) {
          for (const kind of applicableMistakes(one)) {
            const mistake = applyMistake(one, kind, 20_240_601);
            outcomes.push(
              throughBoundary(mistake, tools.catalog.list(), one.tool.id).then((result) => {
                const reason = result.retryHint?.reason;
                const ok =
                  reason === mistake.expectedReason && (reason !== undefined || result.error === undefined);
                return { kind, ok, why: `${one.key} ${kind} (${mistake.detail}): got ${reason}` };
              }),
            );
          }
        }
      }
      const results = await Promise.all(outcomes);
      for (const { kind, ok } of results) {
        const count = tally.get(kind) ?? { right: 0, total: 0 };
        count.total++;
        if (ok) count.right++;
        tally.set(kind, count);
      }

      expect(results.length).toBeGreaterThan(entries.length * 5);
      expect(results.filter((r) => !r.ok).map((r) => r.why)).toEqual([]);
    },
    120_000,
  );
});
