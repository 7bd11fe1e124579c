/**
 * `npm run fuzz -- --seconds N [--seed S] [--runtime-share P]`: drives the tool boundary and the
 * runtime with hostile input for N seconds (default 20) and prints what it counted (issue 12,
 * "keep the attack surface tested"):
 *
 * | count               | what it means                                                            |
 * |---------------------|--------------------------------------------------------------------------|
 * | inputs              | tool calls sent to the boundary, plus hostile planner turns run           |
 * | crashes             | a boundary call that threw, or a run that did not end in its budget       |
 * | pollution           | `Object.prototype` gained a property                                      |
 * | invalid executions  | `execute` ran with an input its schema refuses                             |
 * | oversized hints     | a RetryHint over 16 KB                                                    |
 * | answers             | hostile answers given to waiting runs (clarification, confirmation, external tool results) |
 * | answer mismatches   | an answer that was refused but moved the run or its stored row, or was accepted and the stored row disagrees with the outcome |
 * | p50 / p99 / max     | ms per boundary input (target: max ≤ 50 ms on an idle machine)            |
 * | max, re-timed       | the 20 slowest inputs timed again alone (best of 3): an input's own cost, without GC pauses or load |
 *
 * Inputs come from fast-check: arbitrary values (`fc.anything`, with functions, symbols, BigInts,
 * sparse arrays, proxies and cycles mixed in), their JSON text, near-JSON text, and deep or wide
 * values up to the caps, and values over them (an array of 10^7 empty slots, an object of 10^5
 * keys: issue 24 item 8, refused from their size). Answers (issue 24 item 8) are BigInts, cycles,
 * functions, Proxies, strings over the 65,536-character bound, a `type: 'cancel'` smuggled into a
 * confirmation, non-string error messages, mixed with fast-check's values. Exits 1 on any crash,
 * pollution, invalid execution, oversized hint or answer mismatch.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { z } from 'zod';
import { scriptedPlanner } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { RunAnswerError } from '../runtime/run-handle.ts';
import { callTool } from '../tools/call-tool.ts';
import { defineTool } from '../tools/define-tool.ts';
import { ToolCatalog } from '../tools/tool-catalog.ts';

const HINT_LIMIT_BYTES = 16 * 1024;

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    seed: { type: 'string' },
    'runtime-share': { type: 'string', default: '0.05' },
  },
});
const seconds = Number(args.seconds);
const seed = args.seed === undefined ? Date.now() % 2 ** 31 : Number(args.seed);
const runtimeShare = Number(args['runtime-share']);

const schemas = {
  'fz.profile': z.object({
    email: z.email(),
    plan: z.enum(['free', 'pro']),
    tags: z.array(z.string()).max(50).optional(),
    address: z.object({ city: z.string(), zip: z.string().regex(/^\d{5}$/) }).optional(),
  }),
  'fz.numbers': z.object({
    values: z.array(z.number()),
    mode: z.union([z.literal('sum'), z.literal('max')]),
  }),
  'fz.any': z.object({ payload: z.unknown() }),
  'fz.deep': z.object({ tree: z.record(z.string(), z.unknown()) }),
};
let invalidExecutions = 0;
let executions = 0;
const tools = Object.entries(schemas).map(([id, input]) =>
  defineTool({
    id,
    description: `fuzz target ${id}`,
    input: input as z.ZodType,
    execute: async (value: unknown) => {
      executions++;
      if (!(input as z.ZodType).safeParse(value).success) invalidExecutions++;
      return { ok: true };
    },
  }),
);
const catalog = new ToolCatalog(tools);
const ids = [...catalog.ids, 'fz.unknown', '__proto__', 'constructor'];

function hostile(): fc.Arbitrary<unknown> {
  const leaf = fc.oneof(
    fc.anything({
      withBigInt: true,
      withMap: true,
      withSet: true,
      withSparseArray: true,
      withTypedArray: true,
    }),
    fc.constant(() => 1),
    fc.constant(Symbol('s')),
    fc.constant(new Array(50_000)),
    fc.constant(TEN_MILLION_SLOTS),
    fc.constant(HUNDRED_THOUSAND_KEYS),
    fc.constant(Array.from({ length: 20_000 }, () => 1)),
    fc.constant(JSON.parse('{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}}')),
  );
  const shaped = fc.record(
    {
      email: fc.oneof(fc.emailAddress(), fc.string(), fc.integer()),
      plan: fc.oneof(fc.constantFrom('free', 'pro', 'PRO', ''), fc.integer()),
      tags: fc.oneof(fc.array(fc.string()), fc.array(fc.anything(), { maxLength: 200 })),
      values: fc.array(fc.oneof(fc.double(), fc.string()), { maxLength: 500 }),
      payload: fc.anything(),
      tree: fc.dictionary(fc.string(), fc.anything()),
    },
    { requiredKeys: [] },
  );
  const proxied = shaped.map((value) => new Proxy(value, {}));
  const throwing = fc.constant(
    new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
        ownKeys() {
          throw new Error('keys');
        },
      },
    ),
  );
  const cyclic = shaped.map((value) => {
    (value as Record<string, unknown>).self = value;
    return value;
  });
  const deep = fc.integer({ min: 1, max: 200 }).map((depth) => {
    let value: unknown = 'leaf';
    for (let i = 0; i < depth; i++) value = { tree: value };
    return value;
  });
  const asText = shaped.map((value) => JSON.stringify(value) ?? 'null');
  const nearJson = asText.chain((text) =>
    fc.nat({ max: Math.max(0, text.length - 1) }).map((cut) => text.slice(0, cut)),
  );
  return fc.oneof(leaf, shaped, proxied, throwing, cyclic, deep, asText, nearJson, fc.string());
}

/** Values over every cap, built once and shared (issue 24 item 8). */
const TEN_MILLION_SLOTS = new Array(10_000_000);
const HUNDRED_THOUSAND_KEYS = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i]));

const calls = fc.record({ name: fc.constantFrom(...ids), input: hostile() });
const plans = fc.oneof(
  fc.record({ finalResponse: fc.record({ text: fc.string(), data: hostile() }) }),
  fc.record({
    toolCalls: fc.array(
      fc.record({
        name: fc.constantFrom(...ids),
        toolCallId: fc.constantFrom('call_0', 'x'),
        input: hostile(),
      }),
      { maxLength: 5 },
    ),
  }),
  fc.record({
    notes: fc.array(fc.string(), { maxLength: 100 }),
    finalResponse: fc.record({ text: fc.string() }),
  }),
  hostile(),
);

/** A cyclic value, for answers. */
const CYCLE: Record<string, unknown> = { a: 1 };
CYCLE.self = CYCLE;
const answerValue = fc.oneof(
  hostile(),
  fc.constantFrom<unknown>(10n, CYCLE, () => 'x', Symbol('s'), 'x'.repeat(65_537), '', null, undefined),
  fc.string(),
  fc.boolean(),
);
/** Hostile answers to a waiting run, by what it waits for. */
const answers = fc.oneof(
  fc.record({
    kind: fc.constant('clarification' as const),
    answer: fc.oneof(
      answerValue,
      fc.record(
        { id: fc.oneof(fc.constant('q1'), answerValue), answer: answerValue, type: fc.constant('cancel') },
        { requiredKeys: [] },
      ),
    ),
  }),
  fc.record({
    kind: fc.constant('confirmation' as const),
    answer: fc.oneof(
      answerValue,
      fc.record(
        {
          id: fc.oneof(fc.constant('c1'), answerValue),
          approved: fc.oneof(fc.boolean(), answerValue),
          by: answerValue,
          reason: answerValue,
          type: fc.constantFrom('cancel', 'confirm', 'provide.clarification'),
        },
        { requiredKeys: ['id', 'approved'] },
      ),
    ),
  }),
  fc.record({
    kind: fc.constant('external' as const),
    answer: fc.oneof(
      answerValue,
      fc.array(
        fc.record(
          {
            toolCallId: fc.oneof(fc.constant('e1'), answerValue),
            result: answerValue,
            error: fc.oneof(
              answerValue,
              fc.record({ message: answerValue, recoverable: answerValue }, { requiredKeys: [] }),
            ),
          },
          { requiredKeys: ['toolCallId'] },
        ),
        { maxLength: 3 },
      ),
    ),
  }),
);
const awaitPlans = {
  clarification: { await: { clarification: { id: 'q1', question: 'Which order?', missingFields: [] } } },
  confirmation: { await: { confirmation: { id: 'c1', prompt: 'Refund 50 EUR?' } } },
  external: {
    await: { externalTools: { id: 'ext', calls: [{ name: 'fz.external', toolCallId: 'e1', input: {} }] } },
  },
};

const durations: number[] = [];
let inputs = 0;
let crashes = 0;
let oversizedHints = 0;
const meta = { runId: 'fuzz', turnId: 'fuzz:t1', toolCallId: 'fuzz:t1:c1', agentId: 'fuzz', attempt: 1 };
const polluted = () =>
  Object.keys(Object.prototype).length > 0 || ({} as { polluted?: unknown }).polluted !== undefined;

const boundarySamples = fc.sample(calls, { seed, numRuns: 2_000 });
const planSamples = fc.sample(plans, { seed: seed + 1, numRuns: 500 });
const deadline = performance.now() + seconds * 1000;
let round = 0;
let pollution = 0;

async function boundaryInput(call: { name: string; input: unknown }): Promise<void> {
  const started = performance.now();
  try {
    const result = await callTool(catalog, { name: call.name, toolCallId: 'c', input: call.input }, { meta });
    const hint = result.retryHint === undefined ? 0 : JSON.stringify(result.retryHint).length;
    if (hint > HINT_LIMIT_BYTES) oversizedHints++;
  } catch (err) {
    crashes++;
    if (crashes <= 5) console.error('fuzz: the boundary threw:', err);
  }
  const took = performance.now() - started;
  durations.push(took);
  keepIfSlow(took, call);
  inputs++;
}

/** The slowest boundary inputs seen, to time again alone at the end (a GC pause or another process is not the input's cost). */
const slowest: { ms: number; call: { name: string; input: unknown } }[] = [];
function keepIfSlow(ms: number, call: { name: string; input: unknown }): void {
  if (slowest.length === 20 && ms <= slowest[19]!.ms) return;
  slowest.push({ ms, call });
  slowest.sort((a, b) => b.ms - a.ms);
  slowest.length = Math.min(slowest.length, 20);
}

/** The least of three timings of one input alone, ms. */
async function retime(call: { name: string; input: unknown }): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    await callTool(catalog, { name: call.name, toolCallId: 'c', input: call.input }, { meta }).catch(
      () => undefined,
    );
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

async function hostileRun(plan: unknown): Promise<void> {
  const runtime = createRuntime({
    agent: { id: 'fuzz' },
    planner: scriptedPlanner([
      plan as never,
      { finalResponse: { text: 'end' } },
      { finalResponse: { text: 'end' } },
    ]),
    tools,
    telemetry: false,
    caps: { timeBudgetMs: 2_000 },
    onError: () => {},
  });
  try {
    const run = runtime.start({ messages: [{ role: 'user', content: 'fuzz' }] });
    const ended = await Promise.race([
      run.result().then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5_000)),
    ]);
    if (!ended) {
      crashes++;
      console.error('fuzz: a run did not end within its budget');
    }
  } catch (err) {
    crashes++;
    if (crashes <= 5) console.error('fuzz: runtime.start threw:', err);
  } finally {
    await runtime.close();
  }
  inputs++;
}

let answerCount = 0;
let answerMismatches = 0;
const answerSamples = fc.sample(answers, { seed: seed + 2, numRuns: 500 });

/**
 * Starts a run that waits for `sample.kind`, gives it the hostile answer, and checks the answer's
 * contract: refused (RunAnswerError) → the run still waits and its stored row did not move;
 * accepted → the run ends, and the store says what the outcome says (never `awaiting` v1 under a
 * completed run, never canceled by a confirmation's smuggled `type`).
 */
async function hostileAnswer(sample: { kind: keyof typeof awaitPlans; answer: unknown }): Promise<void> {
  const end = { finalResponse: { text: 'end' } };
  const runtime = createRuntime({
    agent: { id: 'fuzz' },
    planner: scriptedPlanner([awaitPlans[sample.kind] as never, end, end]),
    tools,
    telemetry: false,
    caps: { timeBudgetMs: 2_000 },
    onError: () => {},
  });
  const mismatch = (what: string) => {
    answerMismatches++;
    if (answerMismatches <= 5) console.error(`fuzz: answer (${sample.kind}): ${what}`);
  };
  try {
    const run = runtime.start({ messages: [{ role: 'user', content: 'fuzz' }] });
    for (let i = 0; i < 400 && run.status !== 'awaiting'; i++) await new Promise((r) => setTimeout(r, 5));
    if (run.status !== 'awaiting') return mismatch(`the run never waited (${run.status})`);
    await runtime.flush();
    const before = await runtime.store.load(run.runId);
    let refused = false;
    try {
      const answer = sample.answer as never;
      if (sample.kind === 'clarification') await run.provideClarification(answer);
      else if (sample.kind === 'confirmation') await run.confirm(answer);
      else await run.provideToolResults(answer);
    } catch (err) {
      refused = true;
      if (!(err instanceof RunAnswerError))
        mismatch(`threw ${String((err as Error)?.name)}, not RunAnswerError`);
    }
    await runtime.flush();
    if (refused) {
      const after = await runtime.store.load(run.runId);
      if (run.status !== 'awaiting' || after?.status !== 'awaiting' || after?.version !== before?.version) {
        mismatch(`refused, yet the run is ${run.status} and its row ${after?.status} v${after?.version}`);
      }
      return;
    }
    const outcome = await Promise.race([
      run.result(),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 5_000)),
    ]);
    if (!outcome) return mismatch('accepted, and the run did not end');
    await runtime.flush();
    const after = await runtime.store.load(run.runId);
    if (after?.status !== outcome.status)
      mismatch(`the run says ${outcome.status}, its row ${after?.status}`);
    if (outcome.status === 'canceled') mismatch('an answer canceled the run');
  } catch (err) {
    crashes++;
    if (crashes <= 5) console.error('fuzz: an answer crashed the runtime:', err);
  } finally {
    await runtime.close();
    answerCount++;
    inputs++;
  }
}

process.on('uncaughtException', (err) => {
  crashes++;
  console.error('fuzz: uncaught exception:', err);
});
process.on('unhandledRejection', (err) => {
  crashes++;
  console.error('fuzz: unhandled rejection:', err);
});

while (performance.now() < deadline) {
  const call = boundarySamples[round % boundarySamples.length]!;
  await boundaryInput(call);
  if (Math.random() < runtimeShare) await hostileRun(planSamples[round % planSamples.length]);
  if (Math.random() < runtimeShare) await hostileAnswer(answerSamples[round % answerSamples.length]!);
  if (polluted()) pollution++;
  round++;
  // A fresh batch of samples every full pass, so a long run keeps finding new inputs.
  if (round % boundarySamples.length === 0) {
    boundarySamples.splice(
      0,
      boundarySamples.length,
      ...fc.sample(calls, { seed: seed + round, numRuns: 2_000 }),
    );
  }
}

durations.sort((a, b) => a - b);
let slowestRetimed = 0;
for (const { call } of slowest) slowestRetimed = Math.max(slowestRetimed, await retime(call));
const at = (q: number) => durations[Math.min(durations.length - 1, Math.floor(q * durations.length))] ?? 0;
const rows: [string, string][] = [
  ['seed', String(seed)],
  ['seconds', String(seconds)],
  ['inputs', String(inputs)],
  ['executions', String(executions)],
  ['crashes', String(crashes)],
  ['pollution', String(pollution)],
  ['invalid executions', String(invalidExecutions)],
  ['oversized hints', String(oversizedHints)],
  ['answers', String(answerCount)],
  ['answer mismatches', String(answerMismatches)],
  ['p50 ms', at(0.5).toFixed(3)],
  ['p99 ms', at(0.99).toFixed(3)],
  ['max ms', (durations.at(-1) ?? 0).toFixed(3)],
  ['max ms, re-timed', `${slowestRetimed.toFixed(3)} (the 20 slowest inputs again, alone, best of 3)`],
];
for (const [name, value] of rows) console.log(`${name.padEnd(20)} ${value}`);
const failed = crashes + pollution + invalidExecutions + oversizedHints + answerMismatches > 0;
console.log(failed ? 'fuzz: FAILED' : 'fuzz: ok');
process.exit(failed ? 1 : 0);
