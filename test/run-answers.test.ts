/**
 * Issue 24 item 8: answers given to a waiting run from the API are checked like planner values,
 * at the edge (runtime/run-answers.ts). A refused answer throws RunAnswerError and changes
 * nothing: the run still waits and the store still says `awaiting`.
 */
import { describe, expect, it } from 'vitest';
import { scriptedPlanner } from '../run/planner.ts';
import { MAX_ANSWER_CHARS, MAX_ERROR_MESSAGE_CHARS } from '../runtime/run-answers.ts';
import { RunAnswerError, type RunHandle } from '../runtime/run-handle.ts';
import { done, reachState, testRuntime } from './run-fixtures.ts';

const prompt = [{ role: 'user' as const, content: 'Refund order 42' }];
const confirmation = { await: { confirmation: { id: 'refund', prompt: 'Refund 50 EUR?' } } };
const clarification = { await: { clarification: { id: 'q1', question: 'Which order?', missingFields: [] } } };
const external = {
  await: { externalTools: { id: 'ext', calls: [{ name: 'shop.lookup', toolCallId: 'e1', input: {} }] } },
};

async function waiting(plan: object, kind: string) {
  const runtime = testRuntime({ planner: scriptedPlanner([plan, done('Done.'), done('Done.')]) });
  const run = runtime.start({ messages: prompt });
  await reachState(run, `awaiting.${kind}`);
  await runtime.flush?.();
  return { runtime, run };
}

/** The answer is refused, and neither the run nor its stored row moved. */
async function refusedAndUnchanged(
  { runtime, run }: Awaited<ReturnType<typeof waiting>>,
  answer: (run: RunHandle) => Promise<void>,
  message: RegExp,
) {
  const before = await runtime.store.load(run.runId);
  const error = await answer(run).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(RunAnswerError);
  expect((error as Error).message).toMatch(message);
  await runtime.flush?.();
  expect(run.status).toBe('awaiting');
  const after = await runtime.store.load(run.runId);
  expect(after?.status).toBe('awaiting');
  expect(after?.version).toBe(before?.version);
}

describe('confirmation answers', () => {
  it.each([
    ['a BigInt reason', { reason: 10n }, /`reason` must be a string/],
    [
      'a cyclic reason',
      {
        reason: (() => {
          const c: Record<string, unknown> = {};
          c.self = c;
          return c;
        })(),
      },
      /`reason` must be a string/,
    ],
    ['a function as `by`', { by: () => 'ops' }, /`by` must be a string/],
    [
      'a reason over the limit',
      { reason: 'x'.repeat(MAX_ANSWER_CHARS + 1) },
      /`reason` is 65537 characters; the limit is 65536/,
    ],
    ['`approved` not a boolean', { approved: 'yes' }, /`approved` must be a boolean/],
  ])(
    '%s is refused before anything is sent (the store stayed at awaiting v1 while the run said completed)',
    async (_name, extra, message) => {
      const waited = await waiting(confirmation, 'confirmation');
      await refusedAndUnchanged(
        waited,
        (run) => run.confirm({ id: 'refund', approved: true, ...extra } as never),
        message,
      );
      await waited.run.confirm({ id: 'refund', approved: true, by: 'ops@example.com' });
      expect((await waited.run.result()).status).toBe('completed');
      expect((await waited.runtime.store.load(waited.run.runId))?.status).toBe('completed');
    },
  );

  it("the answer's own `type` cannot turn a confirmation into a cancel", async () => {
    const { run } = await waiting(confirmation, 'confirmation');
    await run.confirm({ id: 'refund', approved: true, type: 'cancel' } as never);
    const outcome = await run.result();
    expect(outcome.status).toBe('completed');
    expect(outcome.finalResponse?.text).toBe('Done.');
  });
});

describe('clarification answers', () => {
  it('an answer over 65,536 characters is refused; the run still waits', async () => {
    const waited = await waiting(clarification, 'clarification');
    await refusedAndUnchanged(
      waited,
      (run) => run.provideClarification({ id: 'q1', answer: 'x'.repeat(MAX_ANSWER_CHARS + 1) }),
      /`answer` is 65537 characters; the limit is 65536/,
    );
    await waited.run.provideClarification({ id: 'q1', answer: 'Order 42' });
    expect((await waited.run.result()).status).toBe('completed');
  });

  it('an answer that is not an object, or whose field throws when read, is refused', async () => {
    const waited = await waiting(clarification, 'clarification');
    await refusedAndUnchanged(waited, (run) => run.provideClarification(null as never), /must be an object/);
    const hostile = Object.defineProperty({ id: 'q1' }, 'answer', {
      get() {
        throw new Error('trap');
      },
    });
    await refusedAndUnchanged(
      waited,
      (run) => run.provideClarification(hostile as never),
      /`answer` could not be read \(trap\)/,
    );
  });
});

describe('external tool results', () => {
  it('an error message that is not a string is refused', async () => {
    const waited = await waiting(external, 'externalTools');
    await refusedAndUnchanged(
      waited,
      (run) => run.provideToolResults([{ toolCallId: 'e1', error: { message: 10n as never } }]),
      /the result for toolCallId "e1": `error.message` must be a string/,
    );
  });

  it('a 5.2 MB error message is kept to its first 4,096 characters', async () => {
    const { run } = await waiting(external, 'externalTools');
    await run.provideToolResults([{ toolCallId: 'e1', error: { message: 'e'.repeat(5_200_000) } }]);
    const outcome = await run.result();
    const message = outcome.toolResults[0]?.error?.message ?? '';
    expect(message).toBe(`${'e'.repeat(MAX_ERROR_MESSAGE_CHARS)}…(5200000 characters)`);
  });
});
