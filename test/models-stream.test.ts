/**
 * Issue 24 item 8: a streaming model whose stream ignores the request's abort was never canceled
 * (72k reads in the 3 s after `runtime.close()`), and its text was buffered without a cap (536 MB,
 * then `RangeError: Invalid string length`). The planner now cancels the reader on abort and past
 * `MAX_STREAM_CHARS`.
 */
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { modelPlanner } from '../models/model-planner.ts';
import { MAX_STREAM_CHARS } from '../models/stream-result.ts';
import { defineTool } from '../tools/define-tool.ts';
import { reachState, testRuntime } from './run-fixtures.ts';

/** A model whose stream never ends and never looks at the abort signal; counts its pulls. */
function endlessModel(part: (n: number) => LanguageModelV3StreamPart, first: LanguageModelV3StreamPart[]) {
  const counter = { pulls: 0, canceled: false };
  const model = new MockLanguageModelV3({
    doStream: async () => ({
      stream: new ReadableStream<LanguageModelV3StreamPart>(
        {
          start(controller) {
            for (const item of first) controller.enqueue(item);
          },
          async pull(controller) {
            // As a socket would: a macrotask per chunk.
            await new Promise((resolve) => setImmediate(resolve));
            controller.enqueue(part(counter.pulls++));
          },
          cancel() {
            counter.canceled = true;
          },
        },
        { highWaterMark: 0 },
      ),
    }),
  });
  return { model, counter };
}

const textForever = () =>
  endlessModel(
    (n) => ({ type: 'text-delta', id: 't', delta: `word${n} ` }),
    [{ type: 'text-start', id: 't' }],
  );

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a streaming model that ignores abort', () => {
  it('is read no more once the runtime closes', async () => {
    const { model, counter } = textForever();
    const runtime = testRuntime({ planner: modelPlanner({ model, stream: true }) });
    runtime.start({ messages: [{ role: 'user', content: 'hi' }] });
    await sleep(100);
    expect(counter.pulls).toBeGreaterThan(0);

    await runtime.close();
    const atClose = counter.pulls;
    await sleep(300);
    expect(counter.pulls - atClose).toBeLessThanOrEqual(1);
    expect(counter.canceled).toBe(true);
  });

  it('is read no more once the run is canceled', async () => {
    const { model, counter } = textForever();
    const run = testRuntime({ planner: modelPlanner({ model, stream: true }) }).start({
      messages: [{ role: 'user', content: 'hi' }],
    });
    await reachState(run, 'planning');
    await sleep(50);
    run.cancel('user left');
    expect((await run.result()).status).toBe('canceled');
    const atCancel = counter.pulls;
    await sleep(300);
    expect(counter.pulls - atCancel).toBeLessThanOrEqual(1);
    expect(counter.canceled).toBe(true);
  });
});

describe('a streamed answer is capped', () => {
  it(`text past ${MAX_STREAM_CHARS} characters fails the turn and cancels the stream (it grew to a RangeError)`, async () => {
    const chunk = 'x'.repeat(64 * 1024);
    const { model, counter } = endlessModel(
      () => ({ type: 'text-delta', id: 't', delta: chunk }),
      [{ type: 'text-start', id: 't' }],
    );
    const outcome = await testRuntime({ planner: modelPlanner({ model, stream: true }) })
      .start({ messages: [{ role: 'user', content: 'hi' }] })
      .result();

    expect(outcome.status).toBe('failed');
    expect(outcome.error?.message).toContain(
      `The model's streamed answer passed ${MAX_STREAM_CHARS} characters; the stream was canceled`,
    );
    expect(counter.canceled).toBe(true);
    expect(counter.pulls).toBeLessThanOrEqual(MAX_STREAM_CHARS / chunk.length + 2);
  });

  it('tool-input deltas count too', async () => {
    const tool = defineTool({
      id: 'notes.write',
      description: 'Writes a note',
      input: z.object({ text: z.string() }),
      execute: async () => ({ ok: true }),
    });
    const chunk = 'y'.repeat(64 * 1024);
    const { model, counter } = endlessModel(
      () => ({ type: 'tool-input-delta', id: 'call_0', delta: chunk }),
      [{ type: 'tool-input-start', id: 'call_0', toolName: 'notes__write' }],
    );
    const outcome = await testRuntime({ planner: modelPlanner({ model, stream: true }), tools: [tool] })
      .start({ messages: [{ role: 'user', content: 'hi' }] })
      .result();

    expect(outcome.error?.message).toContain('the stream was canceled');
    expect(counter.canceled).toBe(true);
  });
});
