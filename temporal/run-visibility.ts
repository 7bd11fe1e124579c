/**
 * What Temporal shows of a run (issue 26 items 5 and 6; docs/temporal.md §Visibility): the line
 * the Web UI and `temporal workflow describe` show as the workflow's current details, and the memo
 * and search attributes a client reads without a worker. Imported by the workflow bundle: no Node
 * built-ins.
 *
 * @module
 */
import type { RunContext } from '../machines/run-context.ts';
import type { RunWorkflowStatus } from './workflow-types.ts';

/** The memo key under which the workflow keeps its status (`RunMemo`). */
export const RUN_MEMO = 'toolwarden';

/** The workflow's memo under {@link RUN_MEMO}: its status as of its last change, readable without a worker. */
export interface RunMemo {
  status: string;
  state: string;
  awaiting: RunWorkflowStatus['awaiting'];
  /** The question or prompt of what it awaits, when a person is asked. */
  question?: string;
}

const clip = (text: string, max = 200) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** The question or prompt a person is asked, when the run awaits one. */
export function awaitedQuestion(context: RunContext): string | undefined {
  const awaiting = context.flow.awaiting;
  if (awaiting?.kind === 'clarification') return awaiting.clarification.question;
  if (awaiting?.kind === 'confirmation') return awaiting.confirmation.prompt;
  return undefined;
}

/** One or two lines (Temporal markdown) on what the run does or awaits now. */
export function currentDetails(context: RunContext, status: RunWorkflowStatus): string {
  const { flow } = context;
  const awaiting = flow.awaiting;
  switch (status.status) {
    case 'completed':
      return `**Completed**: ${clip(flow.finalResponse?.text ?? '')}`;
    case 'failed':
      return `**Failed**: ${clip(`${flow.error?.name ?? 'Error'}: ${flow.error?.message ?? ''}`)}`;
    case 'canceled':
      return `**Canceled**${flow.cancelReason ? `: ${clip(flow.cancelReason)}` : ''}`;
  }
  if (awaiting?.kind === 'clarification') {
    return `**Awaiting a clarification** \`${awaiting.clarification.id}\`: ${clip(awaiting.clarification.question)}`;
  }
  if (awaiting?.kind === 'confirmation') {
    return `**Awaiting a confirmation** \`${awaiting.confirmation.id}\`: ${clip(awaiting.confirmation.prompt)}`;
  }
  if (awaiting?.kind === 'external_tools') {
    const names = [...new Set(awaiting.externalTools.calls.map((call) => call.name))].join(', ');
    return `**Awaiting external tool results** \`${awaiting.externalTools.id}\`: ${clip(names)}`;
  }
  if (awaiting?.kind === 'backoff') return `Backing off until ${new Date(awaiting.until).toISOString()}`;
  if (status.state === 'executing') {
    const names = context.batch.pending.filter((call) => call.status === 'admitted').map((call) => call.name);
    return `Turn ${context.turn}: running ${clip([...new Set(names)].join(', '))}`;
  }
  if (status.state === 'finalizing')
    return `Turn ${context.turn}: finalizing (${flow.finalize?.reason ?? ''})`;
  return `Turn ${context.turn}: ${status.state}`;
}
