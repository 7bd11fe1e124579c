import type { LogEntry } from '../inspection-store.ts';
import { dataOf } from './event-data.ts';
import { plannerTurnOf, turnHeader } from './turn-model.ts';

/** Longest payload shown on an event log row of a type the page does not summarise, characters. */
const RAW_SUMMARY_CHARS = 140;

/** One line saying what a log entry is about, for its row in the event log. */
export function entrySummary(entry: LogEntry): string {
  const d = dataOf(entry);
  switch (entry.type) {
    case 'state_changed':
      return (d.previous ? `${d.previous} → ` : '') + d.state;
    case 'run_started':
      return d.agentId || '';
    case 'await_clarification':
      return d.clarification ? (d.clarification.question ?? '') : '';
    case 'await_confirmation':
      return d.confirmation ? (d.confirmation.prompt ?? '') : '';
    case 'tool_call_scheduled':
      return `${d.tool} #${d.attempt}${d.edited ? ` · input edited${d.edited.by ? ` by ${d.edited.by}` : ''}` : ''}`;
    case 'tool_result':
      return d.result ? `${d.result.name}${d.result.error ? ` ✗ ${d.result.error.message}` : ' ✓'}` : '';
    case 'retry_hint':
      return d.hint ? `${d.hint.reason} ${d.hint.tool}` : '';
    case 'policy_decision':
      return d.decision ? `${d.decision.policy}: ${(d.decision.kinds ?? []).join(', ')}` : '';
    case 'planner_turn':
      return turnHeader(plannerTurnOf(entry));
    case 'planner_note':
      return d.note || '';
    case 'run_completed':
      return d.finalResponse ? (d.finalResponse.text ?? '') : '';
    case 'run_failed':
      return d.error ? (d.error.message ?? '') : '';
    case 'run_canceled':
      return d.reason || '';
    case 'run_forked':
      return d.childRunId === d.runId
        ? `from ${d.parentRunId} at #${d.atEvent}`
        : `into ${d.childRunId} at #${d.atEvent}`;
    default: {
      const text = JSON.stringify(entry.data);
      return text && text.length > RAW_SUMMARY_CHARS ? `${text.slice(0, RAW_SUMMARY_CHARS)}…` : text || '';
    }
  }
}

/** The time of an entry after its run started, as the log shows it: `+1.234s`. */
export function entryOffset(entry: LogEntry, startedAt: number | undefined): string {
  const offset = startedAt === undefined ? 0 : (entry.at - startedAt) / 1000;
  return `+${offset.toFixed(3)}s`;
}
