import { describe, expect, it } from 'vitest';
import type { BfclEntry, BfclFunctionDoc } from '../bfcl/bfcl-types.ts';
import { caseFromEntry } from '../bfcl/eval/eval-case.ts';
import { DEFAULT_EVAL_SETTINGS, runCase } from '../bfcl/eval/run-case.ts';
import { EXPECTED_REASON, MISTAKE_KINDS, type MistakeKind } from '../bfcl/mistake-model.ts';

/**
 * The hint-guided repair planner over each mistake kind, through the real runtime with the
 * eval's policies (`runCase`), on small entries written here in BFCL's own shape: no data set
 * needed. Each run must see the hint the mistake calls for first, repair the call, and end with
 * the ground-truth call executed.
 */

const bookFlight: BfclFunctionDoc = {
  name: 'book_flight',
  description: 'Books a flight.',
  parameters: {
    type: 'dict',
    properties: {
      origin: { type: 'string', description: 'Departure airport code' },
      destination: { type: 'string', description: 'Arrival airport code' },
      seats: { type: 'integer', description: 'Number of seats' },
      cabin: { type: 'string', enum: ['economy', 'business'], description: 'Cabin class' },
      note: { type: 'string', description: 'A note for the crew', default: '' },
    },
    required: ['origin', 'destination', 'seats', 'cabin'],
  },
};

function entry(overrides: Partial<BfclEntry>): BfclEntry {
  return {
    id: 'test_0',
    category: 'simple_python',
    language: 'python',
    turns: [[{ role: 'user', content: 'Book 2 economy seats from SFO to JFK, note "window".' }]],
    functions: [bookFlight],
    heldOutFunctions: [],
    excludedFunctions: [],
    involvedClasses: [],
    groundTruth: {
      kind: 'calls',
      calls: [
        {
          name: 'book_flight',
          args: { origin: ['SFO'], destination: ['JFK'], seats: [2], cabin: ['economy'], note: ['window'] },
        },
      ],
    },
    source: { file: 'test', line: 1 },
    ...overrides,
  };
}

const options = { seed: 1, toolTimeoutMs: 5_000, faultTimeoutMs: 100, retryAfterMs: 20 };

describe('the hint-guided repair planner through the runtime, one run per mistake kind', () => {
  it.each(MISTAKE_KINDS.map((kind) => [kind]))(
    '%s: the first hint names it, the repair ends with the ground-truth call',
    async (kind: MistakeKind) => {
      const evalCase = caseFromEntry(entry({}), { ...options, kinds: [kind] });
      expect(evalCase.kind).toBe(kind);
      const record = await runCase(evalCase, DEFAULT_EVAL_SETTINGS);

      expect(record.outcome, record.notes.join(' | ')).toBe('completed');
      expect(record.hintReasons[0]).toBe(EXPECTED_REASON[kind]);
      expect(record.correct, record.mismatch).toBe(true);
      expect(record.executed).toEqual([
        {
          tool: 'bfcl.book_flight',
          input: { origin: 'SFO', destination: 'JFK', seats: 2, cabin: 'economy', note: 'window' },
        },
      ]);
      expect(record.storedStatus).toBe('completed');
      if (kind === 'none') expect(record.failedCalls).toBe(0);
      else expect(record.repairedOnFirstRetry).toBe(true);
      // Missing fields, and whatever a cut may have lost, are asked of the user.
      expect(record.clarifications > 0).toBe(kind === 'missing_required' || kind === 'truncated_json');
    },
  );

  it('in a parallel entry, answers the clarification for the call that is not done yet', async () => {
    const parallel = entry({
      id: 'parallel_test',
      category: 'parallel',
      groundTruth: {
        kind: 'calls',
        calls: [
          {
            name: 'book_flight',
            args: { origin: ['SFO'], destination: ['JFK'], seats: [2], cabin: ['economy'] },
          },
          {
            name: 'book_flight',
            args: { origin: ['SFO'], destination: ['LAX'], seats: [1], cabin: ['business'] },
          },
        ],
      },
    });
    // Seed 3 puts the mistake on the second call; its destination is what tells the two apart.
    let evalCase = caseFromEntry(parallel, { ...options, kinds: ['missing_required'] });
    for (
      let seed = 1;
      !evalCase.detail.includes('destination') || evalCase.mistakeKey !== 'parallel_test#1';
      seed++
    ) {
      evalCase = caseFromEntry(parallel, { ...options, seed, kinds: ['missing_required'] });
    }
    const record = await runCase(evalCase, DEFAULT_EVAL_SETTINGS);
    expect(record.clarifications).toBe(1);
    expect(record.correct, record.mismatch).toBe(true);
    expect(record.executed.map((call) => call.input.destination).sort()).toEqual(['JFK', 'LAX']);
  });

  it('multi_turn_miss_param: awaits a clarification, answered with the later user turn, then calls', async () => {
    const mkdir: BfclFunctionDoc = {
      name: 'mkdir',
      description: 'Creates a directory.',
      parameters: {
        type: 'dict',
        properties: { dir_name: { type: 'string', description: 'Name of the new directory' } },
        required: ['dir_name'],
      },
    };
    const missParam = entry({
      id: 'multi_turn_miss_param_test',
      category: 'multi_turn_miss_param',
      turns: [
        [{ role: 'user', content: 'Make me a new folder.' }],
        [{ role: 'user', content: 'Call it WebDev.' }],
      ],
      functions: [mkdir],
      groundTruth: {
        kind: 'turns',
        turns: [[], [{ name: 'mkdir', args: { dir_name: 'WebDev' }, source: "mkdir(dir_name='WebDev')" }]],
      },
    });
    const evalCase = caseFromEntry(missParam, options);
    expect(evalCase.kind).toBe('missing_param');
    expect(evalCase.messages).toEqual([{ role: 'user', content: 'Make me a new folder.' }]);

    const record = await runCase(evalCase, DEFAULT_EVAL_SETTINGS);
    expect(record.hintReasons).toEqual(['missing_fields']);
    expect(record.clarifications).toBe(1);
    expect(record.executed).toEqual([{ tool: 'bfcl.mkdir', input: { dir_name: 'WebDev' } }]);
    expect(record.correct).toBe(true);
  });

  it('multi_turn_miss_param without a required argument to miss: the planner asks before calling', async () => {
    const checkTires: BfclFunctionDoc = {
      name: 'check_tire_pressure',
      description: 'Checks the tire pressure.',
      parameters: { type: 'dict', properties: {}, required: [] },
    };
    const asks = entry({
      id: 'multi_turn_miss_param_tires',
      category: 'multi_turn_miss_param',
      turns: [
        [{ role: 'user', content: 'Is the car fine?' }],
        [{ role: 'user', content: 'I mean the tires.' }],
      ],
      functions: [checkTires],
      groundTruth: {
        kind: 'turns',
        turns: [[], [{ name: 'check_tire_pressure', args: {}, source: 'check_tire_pressure()' }]],
      },
    });
    const evalCase = caseFromEntry(asks, options);
    expect(evalCase.kind).toBe('asks_first');

    const record = await runCase(evalCase, DEFAULT_EVAL_SETTINGS);
    expect(record.hintReasons).toEqual([]);
    expect(record.clarifications).toBe(1);
    expect(record.executed).toEqual([{ tool: 'bfcl.check_tire_pressure', input: {} }]);
    expect(record.outcome).toBe('completed');
  });
});
