import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Planner } from '../run/planner.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { FORK_PARENT_LABEL, FORK_TRACEPARENT_LABEL } from '../runtime/run-fork.ts';
import {
  ATTR_TOOLWARDEN_FORK_AT_EVENT,
  ATTR_TOOLWARDEN_FORK_PARENT_RUN_ID,
} from '../telemetry/attributes.ts';
import { defineTool } from '../tools/define-tool.ts';
import { inMemoryTracing } from './support/in-memory-tracing.ts';

// Issue 27 item 4: a fork's `invoke_agent` span links the parent run's span (docs/telemetry.md),
// read back from an in-memory exporter.

const { exporter, provider } = inMemoryTracing();

const upsert = defineTool({
  id: 'crm.upsert_profile',
  description: 'Create or update a customer profile',
  input: z.object({ email: z.email(), plan: z.enum(['free', 'pro']) }),
  execute: async (input) => ({ saved: input }),
});

/** Proposes one upsert, then says it is done: the same answers for the parent and the fork. */
const planner: Planner = {
  planStart: async () => ({
    toolCalls: [{ name: 'crm.upsert_profile', input: { email: 'ada@example.com', plan: 'free' } }],
  }),
  planResume: async () => ({ finalResponse: { text: 'saved' } }),
};

const runtimeWith = (telemetry: { tracerProvider: typeof provider }) =>
  createRuntime({
    agent: { id: 'crm', name: 'CRM agent' },
    planner,
    tools: [upsert],
    telemetry,
    forks: true,
  });

const invokeAgent = (runId: string) =>
  exporter
    .getFinishedSpans()
    .filter((span) => span.name.startsWith('invoke_agent') && span.attributes['toolwarden.run.id'] === runId);

describe('span link from a fork to its parent', () => {
  it("gives the fork's invoke_agent span a link to the parent's span, naming the parent run and the step", async () => {
    exporter.reset();
    const runtime = runtimeWith({ tracerProvider: provider });
    await runtime.start({ runId: 'parent', messages: [{ role: 'user', content: 'Add Ada' }] }).result();
    const [parent] = invokeAgent('parent');
    expect(parent).toBeDefined();

    const child = await runtime.fork('parent', { atEvent: 2, runId: 'child' });
    expect((await child.result()).status).toBe('completed');
    const [forked] = invokeAgent('child');
    expect(forked?.links).toHaveLength(1);
    const [link] = forked!.links;
    expect(link!.context.traceId).toBe(parent!.spanContext().traceId);
    expect(link!.context.spanId).toBe(parent!.spanContext().spanId);
    expect(link!.attributes).toEqual({
      [ATTR_TOOLWARDEN_FORK_PARENT_RUN_ID]: 'parent',
      [ATTR_TOOLWARDEN_FORK_AT_EVENT]: 2,
    });
    // The fork is a trace of its own (a new root), linked rather than parented.
    expect(forked!.parentSpanContext).toBeUndefined();
    expect(forked!.spanContext().traceId).not.toBe(parent!.spanContext().traceId);
    await runtime.close();
  });

  it('adds no link for a fork label that names no span context', async () => {
    exporter.reset();
    const runtime = runtimeWith({ tracerProvider: provider });
    const labels = { [FORK_PARENT_LABEL]: 'gone', [FORK_TRACEPARENT_LABEL]: '00-not-a-traceparent-01' };
    await runtime.start({ runId: 'odd', messages: [{ role: 'user', content: 'Add Ada' }], labels }).result();
    expect(invokeAgent('odd')[0]?.links).toEqual([]);
    await runtime.close();
  });
});
