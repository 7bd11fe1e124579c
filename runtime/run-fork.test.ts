import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Planner } from '../run/planner.ts';
import { inMemoryTracing } from '../test/support/in-memory-tracing.ts';
import { defineTool } from '../tools/define-tool.ts';
import { createRuntime } from './create-runtime.ts';
import { FORK_AT_LABEL, FORK_PARENT_LABEL, FORK_TRACEPARENT_LABEL, ForkError } from './run-fork.ts';

const upsert = defineTool({
  id: 'crm.upsert_profile',
  description: 'Creates or updates a customer profile',
  input: z.object({ email: z.email(), plan: z.enum(['free', 'pro']) }),
  execute: async (input) => ({ saved: input }),
});

/** Proposes one upsert (or asks which plan first), then reports what the tool saved. */
const planner = (ask = false): Planner => ({
  async planStart() {
    if (ask)
      return { await: { clarification: { id: 'which-plan', question: 'Which plan?', missingFields: [] } } };
    return { toolCalls: [{ name: 'crm.upsert_profile', input: { email: 'ada@example.com', plan: 'free' } }] };
  },
  async planResume(input) {
    if (input.clarification)
      return {
        toolCalls: [
          {
            name: 'crm.upsert_profile',
            input: { email: 'ada@example.com', plan: input.clarification.answer },
          },
        ],
      };
    const result = input.toolResults.at(-1);
    return { finalResponse: { text: `saved ${JSON.stringify(result?.result ?? result?.error?.message)}` } };
  },
});

async function eventsOf(runtime: ReturnType<typeof createRuntime>, runId: string) {
  const events: { seq: number; type: string; event: Record<string, unknown> }[] = [];
  for await (const record of runtime.events(runId, { follow: false }))
    events.push({ seq: record.seq, type: record.event.type, event: record.event as never });
  return events;
}

describe('runtime.fork (issue 27 item 4)', () => {
  it('forks at a tool call with an edited input: the new run validates and runs it, linked to its parent', async () => {
    const runtime = createRuntime({
      agent: { id: 'crm' },
      planner: planner(),
      tools: [upsert],
      telemetry: false,
      forks: true,
    });
    const parent = runtime.start({ runId: 'parent', messages: [{ role: 'user', content: 'Add Ada' }] });
    expect((await parent.result()).finalResponse?.text).toBe(
      'saved {"saved":{"email":"ada@example.com","plan":"free"}}',
    );
    const scheduled = (await eventsOf(runtime, 'parent')).find((e) => e.type === 'tool_call_scheduled')!;

    const child = await runtime.fork('parent', {
      atEvent: scheduled.seq,
      edit: { input: { email: 'ada@example.com', plan: 'pro' } },
      runId: 'child',
    });
    const out = await child.result();
    expect(out.status).toBe('completed');
    expect(out.finalResponse?.text).toBe('saved {"saved":{"email":"ada@example.com","plan":"pro"}}');
    // The call ran again under the child's ids (a new idempotency key), with the edited input.
    expect(out.toolResults.map((result) => result.toolCallId)).toEqual(['child:t1:c1']);
    const childEvents = await eventsOf(runtime, 'child');
    expect(childEvents[0]!.event).toMatchObject({
      type: 'run_started',
      labels: { [FORK_PARENT_LABEL]: 'parent', [FORK_AT_LABEL]: String(scheduled.seq) },
    });
    const link = {
      type: 'run_forked',
      parentRunId: 'parent',
      childRunId: 'child',
      atEvent: scheduled.seq,
      edit: 'input',
    };
    expect(childEvents.map((e) => e.event)).toContainEqual(
      expect.objectContaining({ ...link, runId: 'child' }),
    );
    expect((await eventsOf(runtime, 'parent')).at(-1)!.event).toMatchObject({ ...link, runId: 'parent' });
    await runtime.close();
  });

  it('hands a traced parent’s traceparent to the fork (a span link’s target), in its labels', async () => {
    const { exporter, provider } = inMemoryTracing();
    const runtime = createRuntime({
      agent: { id: 'crm' },
      planner: planner(),
      tools: [upsert],
      telemetry: { tracerProvider: provider },
      forks: true,
    });
    await runtime.start({ runId: 'traced', messages: [{ role: 'user', content: 'Add Ada' }] }).result();
    const root = exporter.getFinishedSpans().find((span) => span.name.startsWith('invoke_agent'))!;
    const child = await runtime.fork('traced', { atEvent: 2 });
    await child.result();
    const labels = child.context.labels;
    expect(labels[FORK_TRACEPARENT_LABEL]).toMatch(
      new RegExp(`^00-${root.spanContext().traceId}-[0-9a-f]{16}-0[01]$`),
    );
    await runtime.close();
  });

  it('forks at a clarification with another answer; refuses an input edit there and forks when they are off', async () => {
    const runtime = createRuntime({
      agent: { id: 'crm' },
      planner: planner(true),
      tools: [upsert],
      telemetry: false,
      forks: true,
    });
    const parent = runtime.start({ runId: 'asked', messages: [{ role: 'user', content: 'Add Ada' }] });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await parent.provideClarification({ id: 'which-plan', answer: 'free' });
    await parent.result();
    const asked = (await eventsOf(runtime, 'asked')).find((e) => e.type === 'await_clarification')!;
    await expect(runtime.fork('asked', { atEvent: asked.seq, edit: { input: {} } })).rejects.toBeInstanceOf(
      ForkError,
    );
    const preview = await runtime.forkPreview('asked', { atEvent: asked.seq, edit: { answer: 'pro' } });
    expect(preview).toMatchObject({
      execute: [
        { turn: 2, index: 0, name: 'crm.upsert_profile', input: { email: 'ada@example.com', plan: 'pro' } },
      ],
      endsIn: 'completed',
    });
    const child = await runtime.fork('asked', { atEvent: asked.seq, edit: { answer: 'pro' } });
    expect((await child.result()).finalResponse?.text).toContain('"plan":"pro"');
    await runtime.close();

    const off = createRuntime({
      agent: { id: 'crm' },
      planner: planner(),
      tools: [upsert],
      telemetry: false,
    });
    await off.start({ runId: 'r', messages: [{ role: 'user', content: 'Add Ada' }] }).result();
    await expect(off.fork('r', { atEvent: 2 })).rejects.toThrow(/forks are off/);
    await off.close();
  });
});
