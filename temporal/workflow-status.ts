/**
 * What the run workflow says of its run (docs/temporal.md §Visibility): the `status` query's
 * answer, and what Temporal shows (run-visibility.ts): the current details at every state change;
 * the memo and search attributes when the status or what it awaits changes (each one history
 * event), for runs whose client asked for them. Workflow code: Temporal's sandbox, no Node built-ins.
 *
 * @module
 */
import { setCurrentDetails, upsertMemo, upsertSearchAttributes } from '@temporalio/workflow';
import type { RunContext } from '../machines/run-context.ts';
import { awaitedQuestion, currentDetails, RUN_MEMO, type RunMemo } from './run-visibility.ts';
import { type RunWorkflowInput, type RunWorkflowStatus, SEARCH_ATTRIBUTES } from './workflow-types.ts';

const STATUS_KEY = { name: SEARCH_ATTRIBUTES.status, type: 'KEYWORD' } as const;
const AWAITING_KEY = { name: SEARCH_ATTRIBUTES.awaiting, type: 'KEYWORD' } as const;

/** What the run awaits (kind and id), or null. */
export function awaitingOf(context: RunContext): RunWorkflowStatus['awaiting'] {
  const flow = context.flow.awaiting;
  if (!flow) return null;
  const id =
    flow.kind === 'clarification'
      ? flow.clarification.id
      : flow.kind === 'external_tools'
        ? flow.externalTools.id
        : flow.kind === 'confirmation'
          ? flow.confirmation.id
          : undefined;
  return { kind: flow.kind, ...(id === undefined ? {} : { id }) };
}

/** A snapshot of the run as the `status` query answers. */
export function statusOf(
  snapshot: { value: unknown; status: string; context: RunContext },
  eventCount: number,
  execution: number,
): RunWorkflowStatus {
  const state = stateName(snapshot.value);
  const final = snapshot.status === 'done' ? state : undefined;
  return {
    status: final ?? (state.startsWith('awaiting') ? 'awaiting' : 'running'),
    state,
    awaiting: awaitingOf(snapshot.context),
    eventCount,
    execution,
  };
}

/** What Temporal shows of one execution's run. */
export class WorkflowVisibility {
  /** The status key last written to the memo (the start wrote `running||` with the workflow). */
  private shown: string;

  constructor(private readonly input: RunWorkflowInput) {
    this.shown = input.continued ? '' : 'running||';
  }

  /** After a state change: the details; the memo and search attributes if the status moved. */
  publish(now: RunWorkflowStatus, context: RunContext): void {
    const { input } = this;
    // After continue-as-new the execution has no start summary (the command carries none):
    // the details begin with it instead (issue 36 item 7).
    const details = currentDetails(context, now);
    setCurrentDetails(input.continued && input.summary ? `${input.summary}\n\n${details}` : details);
    const visible = input.visibility;
    if (!visible) return;
    const key = `${now.status}|${now.awaiting?.kind ?? ''}|${now.awaiting?.id ?? ''}`;
    if (key === this.shown) return;
    this.shown = key;
    const question = awaitedQuestion(context);
    const memo: RunMemo = {
      status: now.status,
      state: now.state,
      awaiting: now.awaiting,
      ...(question === undefined ? {} : { question }),
    };
    upsertMemo({ [RUN_MEMO]: memo });
    if (visible.searchAttributes) {
      upsertSearchAttributes([
        { key: STATUS_KEY, value: now.status },
        { key: AWAITING_KEY, value: now.awaiting?.kind ?? null },
      ]);
    }
  }
}

/** A state value, dotted: `awaiting.clarification`. */
export function stateName(value: unknown): string {
  if (typeof value === 'string') return value;
  return Object.entries(value as Record<string, unknown>)
    .map(([key, child]) => `${key}.${stateName(child)}`)
    .join(',');
}
