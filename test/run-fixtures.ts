/**
 * Shared pieces of the run actor's tests (`test/run-*.test.ts`): runtimes that are closed after
 * each test, waiting for a state or an event, a planner step that waits for the test.
 */
import { filter, firstValueFrom, take, toArray } from 'rxjs';
import { afterEach } from 'vitest';
import { waitFor } from 'xstate';
import { z } from 'zod';
import { createRuntime, type Runtime, type RuntimeOptions } from '../create-runtime.ts';
import type { PlanInput, PlanResult, PlanResumeInput } from '../run/planner.ts';
import type { RunEvent } from '../run/run-events.ts';
import { type RunHandle, stateName } from '../runtime/run-handle.ts';
import { defineTool } from '../tools/define-tool.ts';

const runtimes: Runtime[] = [];

afterEach(async () => {
  const open = runtimes.splice(0);
  await Promise.all(open.map((runtime) => runtime.close()));
});

/** A runtime with telemetry off (tests of the run actor, not of spans), closed after the test. */
export function testRuntime(
  options: Omit<RuntimeOptions, 'agent'> & { agent?: RuntimeOptions['agent'] },
): Runtime {
  const runtime = createRuntime({ agent: { id: 'test-agent' }, telemetry: false, ...options });
  runtimes.push(runtime);
  return runtime;
}

/** Resolves when the run's active state is `state` (dotted, as `run.state` gives it). */
export async function reachState(run: RunHandle, state: string, timeout = 5_000): Promise<void> {
  await waitFor(run.actor, (snapshot) => stateName(snapshot) === state, { timeout });
}

/** The first event of `type` the run emits (replayed if it was already emitted). */
export function nextEvent<T extends RunEvent['type']>(
  run: RunHandle,
  type: T,
): Promise<Extract<RunEvent, { type: T }>> {
  return firstValueFrom(
    run.events$.pipe(filter((event): event is Extract<RunEvent, { type: T }> => event.type === type)),
  );
}

/** Every event of the run, once it ended. */
export function allEvents(run: RunHandle): Promise<RunEvent[]> {
  return firstValueFrom(run.events$.pipe(toArray()));
}

/** The first `count` events of the run. */
export function firstEvents(run: RunHandle, count: number): Promise<RunEvent[]> {
  return firstValueFrom(run.events$.pipe(take(count), toArray()));
}

/** A promise with its resolve function outside. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * A planner step that never answers on its own: it records the signal it was given and settles
 * only when that signal aborts (with the abort reason).
 */
export function hangingStep(seen: { signal?: AbortSignal }) {
  return (input: PlanInput | PlanResumeInput): Promise<PlanResult> => {
    seen.signal = input.signal;
    return new Promise<PlanResult>((_, reject) => {
      input.signal?.addEventListener('abort', () => reject(input.signal?.reason), { once: true });
    });
  };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `util.echo`: returns its text. */
export const echoTool = defineTool({
  id: 'util.echo',
  description: 'Returns the text it is given',
  input: z.object({ text: z.string() }),
  output: z.object({ text: z.string() }),
  execute: async ({ text }) => ({ text }),
});

/** A final response step. */
export const done = (text = 'Done.'): PlanResult => ({ finalResponse: { text } });

/** One call to `name` with `input` (and `toolCallId` when given). */
export const call = (name: string, input: unknown, toolCallId?: string): PlanResult => ({
  toolCalls: [{ name, input, ...(toolCallId ? { toolCallId } : {}) }],
});
