/**
 * The span link from a resumed segment to the segment before it when the run comes back from its
 * store (issue 27, docs/telemetry.md §Spans): the latest segment's span context is stored with the
 * run (`RunContext.traceContext`, key `toolwarden.segment.traceparent`), so a runtime that never
 * saw that segment (another process, a fresh runtime on the same SQLite file) or that evicted the
 * run links it all the same. Real runtimes on SQLite and PostgreSQL (gated as the durable suites
 * are); spans read back from the SDK's in-memory exporter. The two-process version against the real Jaeger is
 * `telemetry-resume-link.integration.test.ts`.
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunContext } from '../machines/run-context.ts';
import { type ScriptedStep, scriptedPlanner } from '../run/planner.ts';
import { createRuntime, type RuntimeOptions } from '../runtime/create-runtime.ts';
import type { RunStore } from '../stores/run-store.ts';
import { SEGMENT_TRACEPARENT_KEY } from '../telemetry/trace-context.ts';
import { durableStoreKinds, type StoreFixture } from './support/durable-stores.ts';
import { inMemoryTracing } from './support/in-memory-tracing.ts';
import { until } from './support/wait.ts';

const { exporter, provider } = inMemoryTracing();
beforeEach(() => exporter.reset());

const kinds = (await durableStoreKinds('telemetry resume link (PostgreSQL)')).filter(
  (kind) => kind.name !== 'memory',
);

const agent = { id: 'support', name: 'Support agent' };
const prompt = [{ role: 'user' as const, content: 'Put me on a plan' }];
const asks = (id: string): ScriptedStep => ({
  await: { clarification: { id, question: `${id}?`, missingFields: ['plan'] } },
});

function runtimeWith(steps: ScriptedStep[], store: RunStore, extra: Partial<RuntimeOptions> = {}) {
  return createRuntime({
    agent,
    planner: scriptedPlanner(steps),
    store,
    telemetry: { tracerProvider: provider },
    ...extra,
  });
}
const segments = () =>
  exporter.getFinishedSpans().filter((span) => span.name === 'invoke_agent Support agent');
const idOf = (span: ReadableSpan | undefined) => span?.spanContext().spanId;
/** The trace context the store holds for the run (its snapshot's context). */
async function storedTraceContext(store: RunStore, runId: string) {
  const stored = await store.load(runId);
  return (stored?.snapshot as { context: RunContext } | undefined)?.context.traceContext;
}

/** Starts a run and answers `q1`: two segments, the run stored awaiting `q2`. */
async function twoSegments(runtime: ReturnType<typeof runtimeWith>, runId: string) {
  const run = runtime.start({ runId, messages: prompt });
  await until(() => run.status === 'awaiting');
  await run.provideClarification({ id: 'q1', answer: 'pro' });
  await until(() => segments().length === 2 && run.status === 'awaiting');
  // Every write in (no store polling while the run writes: a PostgreSQL load racing a save can
  // read the snapshot row and its member rows of two different versions).
  await runtime.flush();
  return run;
}

for (const kind of kinds) {
  describe.skipIf(kind.skip !== undefined)(
    `a resumed segment links the segment before it, across a restore from the ${kind.name} store${kind.skip ? ` (${kind.skip})` : ''}`,
    () => {
      let fixture: StoreFixture;
      beforeEach(async () => {
        kind.require();
        fixture = await kind.fixture();
      });
      afterEach(() => fixture?.dispose());

      it('stores the latest segment with the run: a fresh runtime on the same database links it', async () => {
        const store = fixture.open();
        // "Process 1": segment 1 asks q1, segment 2 (after the answer) asks q2; then it goes away.
        const first = runtimeWith([asks('q1'), asks('q2')], store);
        await twoSegments(first, 'run-restart');
        await first.close();
        const [segment1, segment2] = segments();
        // The run's root stays segment 1 (the parent of every later segment); the latest is segment 2.
        const carrier = await storedTraceContext(store, 'run-restart');
        expect(carrier?.traceparent).toContain(`-${idOf(segment1)}-`);
        expect(carrier?.[SEGMENT_TRACEPARENT_KEY]).toContain(`-${idOf(segment2)}-`);

        // "Process 2": a runtime with its own telemetry plugin (and store), which never saw segment 2 end.
        const second = runtimeWith([{ finalResponse: { text: 'done' } }], fixture.open());
        const handle = await second.resume('run-restart');
        await handle.provideClarification({ id: 'q2', answer: 'yes' });
        expect((await handle.result()).status).toBe('completed');
        await second.close();

        const third = segments()[2];
        expect(third?.spanContext().traceId).toBe(segment1!.spanContext().traceId);
        expect(third?.parentSpanContext?.spanId).toBe(idOf(segment1));
        expect(third?.links).toHaveLength(1);
        expect(third?.links[0]?.context.spanId).toBe(idOf(segment2));
        expect(third?.links[0]?.attributes).toEqual({
          'toolwarden.resume.restored': true,
          'toolwarden.resume.state': 'awaiting.clarification',
        });
        expect((await storedTraceContext(store, 'run-restart'))?.[SEGMENT_TRACEPARENT_KEY]).toContain(
          `-${idOf(third)}-`,
        );
      });

      it('links it when the same runtime restores a run it evicted (runtime.resume)', async () => {
        const store = fixture.open();
        const runtime = runtimeWith([asks('q1'), asks('q2'), { finalResponse: { text: 'done' } }], store, {
          durable: { evictAfterMs: 20 },
        });
        await twoSegments(runtime, 'run-evicted');
        // Evicted: the runtime no longer hosts it; resume restores it from the store.
        await until(() => runtime.get('run-evicted') === undefined);
        const handle = await runtime.resume('run-evicted');
        await handle.provideClarification({ id: 'q2', answer: 'yes' });
        expect((await handle.result()).status).toBe('completed');
        await runtime.close();

        const [segment1, segment2, segment3] = segments();
        expect(segment3?.parentSpanContext?.spanId).toBe(idOf(segment1));
        expect(segment3?.links.map((link) => [link.context.spanId, link.attributes])).toEqual([
          [
            idOf(segment2),
            { 'toolwarden.resume.restored': true, 'toolwarden.resume.state': 'awaiting.clarification' },
          ],
        ]);
      });

      it('says a segment answered in the process that saw the one before end was not restored', async () => {
        const store = fixture.open();
        const runtime = runtimeWith([asks('q1'), asks('q2'), { finalResponse: { text: 'done' } }], store);
        const run = await twoSegments(runtime, 'run-live');
        await run.provideClarification({ id: 'q2', answer: 'yes' });
        expect((await run.result()).status).toBe('completed');
        await runtime.close();
        const [, segment2, segment3] = segments();
        expect(segment3?.links.map((link) => [link.context.spanId, link.attributes])).toEqual([
          [
            idOf(segment2),
            { 'toolwarden.resume.restored': false, 'toolwarden.resume.state': 'awaiting.clarification' },
          ],
        ]);
      });
    },
  );
}
