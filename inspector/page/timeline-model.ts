/**
 * The timeline's pure part: a run's log entries turned into its tool calls by turn, with the
 * awaits and policy decisions between them.
 */
import type { LogEntry } from '../inspection-store.ts';
import { type ClarificationData, dataOf, type ToolResultData } from './event-data.ts';
import { type PlannerTurn, plannerTurnOf } from './turn-model.ts';

/** A tool call: scheduled at `seq`, its result at `endSeq` (absent while it runs). */
export interface TimelineCall {
  kind: 'call';
  id: string;
  tool: string;
  turn: string;
  /** When it was scheduled (or, without that entry, when its result came), ms since the epoch. */
  start: number;
  attempt?: number;
  seq?: number;
  end?: number;
  endSeq?: number;
  result?: ToolResultData;
}

/** An await or a policy decision between calls. */
export interface TimelineNote {
  kind: 'note';
  note: string;
  at: number;
  seq?: number;
  /** The clarification an `await_clarification` asks (a fork can answer it otherwise). */
  clarification: ClarificationData | null;
}

/** A planner turn (`planner_turn`): what the model was sent and answered, its tokens and latency. */
export interface TimelineTurn {
  kind: 'turn';
  turn: PlannerTurn;
  seq: number;
  /** Transcript messages the turn before it was sent (0: none loaded here). */
  from: number;
}

export type TimelineItem = TimelineCall | TimelineNote | TimelineTurn;

/** The planner turns, calls, awaits and policy decisions of `entries`, in the order they happened. */
export function timelineItems(entries: LogEntry[]): TimelineItem[] {
  const calls = new Map<string, TimelineCall>();
  const order: TimelineItem[] = [];
  let sent = 0;
  for (const entry of entries) {
    const d = dataOf(entry);
    if (entry.type === 'planner_turn') {
      const turn = plannerTurnOf(entry);
      order.push({ kind: 'turn', turn, seq: entry.seq, from: sent });
      sent = turn.messages;
    } else if (entry.type === 'tool_call_scheduled') {
      const call: TimelineCall = {
        kind: 'call',
        id: String(d.toolCallId),
        tool: String(d.tool),
        turn: String(d.turnId),
        start: entry.at,
        seq: entry.seq,
        ...(d.attempt === undefined ? {} : { attempt: d.attempt }),
      };
      calls.set(call.id, call);
      order.push(call);
    } else if (entry.type === 'tool_result' && d.result) {
      let call = calls.get(d.result.toolCallId);
      if (!call) {
        call = {
          kind: 'call',
          id: d.result.toolCallId,
          tool: String(d.result.name),
          turn: String(d.result.toolCallId).replace(/:c\d+$/, ''),
          start: entry.at,
        };
        calls.set(call.id, call);
        order.push(call);
      }
      call.end = entry.at;
      call.endSeq = entry.seq;
      call.result = d.result;
    } else if (entry.type.startsWith('await_')) {
      order.push({
        kind: 'note',
        note: entry.type.replace('await_', 'awaits '),
        at: entry.at,
        seq: entry.seq,
        clarification: entry.type === 'await_clarification' ? (d.clarification ?? null) : null,
      });
    } else if (entry.type === 'policy_decision' && d.decision) {
      order.push({
        kind: 'note',
        note: `policy ${d.decision.policy}: ${(d.decision.kinds ?? []).join(', ')}`,
        at: entry.at,
        clarification: null,
      });
    }
  }
  return order;
}

/** A call's badge: its text (`ok`, the hint's reason, `error`, `running`) and the status it is coloured as. */
export function callOutcome(result: ToolResultData | undefined): { text: string; status: string } {
  if (!result) return { text: 'running', status: 'running' };
  if (result.error) {
    return result.retryHint
      ? { text: result.retryHint.reason ?? 'hint', status: 'hint' }
      : { text: 'error', status: 'error' };
  }
  return { text: 'ok', status: 'ok' };
}

/** The timeline's count: `(12 calls)`, and what it covers when earlier entries are not loaded. */
export function timelineCountText(calls: number, entries: number, earlier: number): string {
  if (!calls) return '';
  return `(${calls} calls${earlier ? ` in the newest ${entries} log entries` : ''})`;
}

/** The entries of a log as of entry `seq` (time travel); all of them when not travelling (null). */
export function travelledLog(entries: LogEntry[], seq: number | null): LogEntry[] {
  return seq === null ? entries : entries.filter((entry) => entry.seq <= seq);
}
