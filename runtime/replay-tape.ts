/**
 * What a parent run recorded, for a fork's recorded replay (issue 38 item 2): each planner turn's
 * inputs and answer (`planner_turn` events and the transcript) and each tool call's input and
 * result (the transcript and `tool_result` events), by position, read from the store, so it works
 * for a run hosted elsewhere or finished before a restart.
 *
 * | decision                        | when                                                                   |
 * |---------------------------------|------------------------------------------------------------------------|
 * | a turn's recorded answer reused | same turn number and kind, the same transcript (ids of the run aside), the same tools advertised, reuse allowed (the parent's planner), not diverged |
 * | a call's recorded result reused | same turn number and index in the batch, same tool, same canonical input (`callFingerprint`), not diverged |
 * | a call not executed (in doubt)  | as above, but the parent has no result for it (scheduled, never answered) or only one marked `inDoubt`: its outcome is unknown |
 * | live                            | anything else; from then on the replay has diverged and everything is live |
 *
 * @module
 */

import type { RunContext } from '../machines/run-context.ts';
import type { ExecuteToolOutput, PlanActorInput, PlanActorOutput } from '../machines/run-ports.ts';
import { callFingerprint } from '../policies/call-fingerprint.ts';
import type { Message } from '../run/message.ts';
import type { PlannerTurnEvent, RunEvent } from '../run/run-events.ts';
import { type PolicyRetryHint, toPolicyRetryHint } from '../tools/retry-hint.ts';
import type { ToolCallMeta } from '../tools/tool-call-meta.ts';
import type { ToolResultJSON } from '../tools/tool-result.ts';

/** One recorded planner turn. */
interface RecordedTurn {
  turnId: string;
  kind: PlannerTurnEvent['kind'];
  /** What it was sent, ids of the run replaced by `$run`. */
  messages: string;
  tools: string | undefined;
  output: PlanActorOutput;
}

/** One recorded tool call. */
export interface RecordedCall {
  toolCallId: string;
  name: string;
  input: unknown;
  fingerprint: string;
  /** Absent: scheduled, never answered (its outcome is unknown). */
  result?: ToolResultJSON;
}

function turnKey(turn: number, kind: PlannerTurnEvent['kind']): string {
  return kind === 'finalize' ? `${turn}f` : String(turn);
}

/** A position in a run: turn number and index in its batch (0-based). */
function position(turn: number, index: number): string {
  return `${turn}:${index}`;
}

/** The turn number of a turn id (`<runId>:t<n>`), of a call id (`<runId>:t<n>:c<m>`) its call index too. */
export function positionOf(id: string): { turn: number; index: number } | undefined {
  const match = /:t(\d+)(?::c(\d+))?$/.exec(id);
  if (!match) return undefined;
  return { turn: Number(match[1]), index: match[2] === undefined ? -1 : Number(match[2]) - 1 };
}

/** Each id of run `runId` in `value`'s JSON (`"<runId>"`, `"<runId>:…"`) written as `$run`. */
export function withoutRunId(value: unknown, runId: string): string {
  const id = JSON.stringify(runId).slice(1, -1);
  return JSON.stringify(value).split(`"${id}:`).join('"$run:').split(`"${id}"`).join('"$run"');
}

/** The input as a planner gave it, JSON text parsed (the boundary parses it the same way). */
export function inputValue(input: unknown): unknown {
  if (typeof input !== 'string') return input;
  try {
    return JSON.parse(input);
  } catch {
    return input;
  }
}

export class ReplayTape {
  /** By turn number and whether it finalized: a finalizing turn keeps the number of the turn before it. */
  private readonly turns = new Map<string, RecordedTurn>();
  private readonly calls = new Map<string, RecordedCall>();

  /**
   * @param runId the parent's id
   * @param events the parent's whole event log
   * @param transcript the parent's transcript (its latest stored snapshot's `context.messages`)
   */
  constructor(
    readonly runId: string,
    events: readonly RunEvent[],
    transcript: readonly Message[],
  ) {
    const inputs = new Map<string, { name: string; input: unknown }>();
    for (const message of transcript)
      if (message.role === 'assistant')
        for (const call of message.toolCalls ?? [])
          inputs.set(call.toolCallId, { name: call.toolName, input: call.input });
    for (const event of events) {
      if (event.type === 'planner_turn' && event.error === undefined && !event.timedOut) {
        const at = positionOf(event.turnId);
        if (!at) continue;
        this.turns.set(turnKey(at.turn, event.kind), {
          turnId: event.turnId,
          kind: event.kind,
          messages: withoutRunId(transcript.slice(0, event.messages), runId),
          tools: event.tools === undefined ? undefined : JSON.stringify(event.tools),
          output: { result: event.result as PlanActorOutput['result'] },
        });
      } else if (event.type === 'tool_call_scheduled') {
        this.record(event.toolCallId, inputs.get(event.toolCallId) ?? { name: event.tool, input: undefined });
      } else if (event.type === 'tool_result') {
        const id = event.result.toolCallId;
        const call = this.record(id, inputs.get(id) ?? { name: event.result.name, input: undefined });
        // A result marked in doubt (the effects' `inDoubt`: the call may or may not have run) is
        // no record of an outcome: the call stays unknown, never executed again.
        if (call && event.result.inDoubt === undefined) call.result = event.result;
      }
    }
  }

  private record(toolCallId: string, given: { name: string; input: unknown }): RecordedCall | undefined {
    const at = positionOf(toolCallId);
    if (!at || at.index < 0) return undefined;
    const key = position(at.turn, at.index);
    let call = this.calls.get(key);
    if (!call) {
      const input = inputValue(given.input);
      call = { toolCallId, name: given.name, input, fingerprint: callFingerprint(given.name, input) };
      this.calls.set(key, call);
    }
    return call;
  }

  /** The recorded turn the fork's turn (its context, `kind`, the tools it advertises) matches, if any. */
  turnFor(
    context: RunContext,
    kind: PlanActorInput['kind'],
    tools: string[] | undefined,
  ): RecordedTurn | undefined {
    const recorded = this.turns.get(turnKey(context.turn, kind));
    if (!recorded || recorded.kind !== kind) return undefined;
    if (tools !== undefined && recorded.tools !== undefined && recorded.tools !== JSON.stringify(tools))
      return undefined;
    return recorded.messages === withoutRunId(context.messages, context.runId) ? recorded : undefined;
  }

  /** The recorded call at the fork's call's position, when it is the same call. */
  callFor(turn: number, index: number, name: string, input: unknown): RecordedCall | undefined {
    const recorded = this.calls.get(position(turn, index));
    if (!recorded || recorded.name !== name) return undefined;
    return recorded.fingerprint === callFingerprint(name, inputValue(input)) ? recorded : undefined;
  }
}

/** What a recorded replay decided for one call (see the module's table). */
export type CallDecision =
  | { kind: 'replay'; recorded: RecordedCall & { result: ToolResultJSON } }
  | { kind: 'in_doubt'; recorded: RecordedCall }
  | { kind: 'live' };

/**
 * One fork's recorded replay: the tape, whether the fork has diverged from it, and what it reused.
 * Planner turns are reused only with `reusePlans` (the fork asks the parent's planner); a fork
 * with another planner asks it every turn, and its calls are still replayed while they match.
 */
export class RecordedReplay {
  diverged = false;
  replayedTurns = 0;
  replayedCalls = 0;

  constructor(
    readonly tape: ReplayTape,
    private readonly reusePlans: boolean,
  ) {}

  /** The recorded output for this turn, or undefined (ask the planner). A turn sent other inputs diverges. */
  plan(
    context: RunContext,
    kind: PlanActorInput['kind'],
    tools: string[] | undefined,
  ): PlanActorOutput | undefined {
    if (this.diverged) return undefined;
    const recorded = this.tape.turnFor(context, kind, tools);
    if (!recorded) {
      this.diverged = true;
      return undefined;
    }
    if (!this.reusePlans) return undefined;
    this.replayedTurns++;
    const now = Date.now();
    return { ...recorded.output, startedAt: now, durationMs: 0, tools, replayedFrom: recorded.turnId };
  }

  /** What to do with the call at (turn, index). Anything but a replay diverges. */
  call(turn: number, index: number, name: string, input: unknown): CallDecision {
    if (this.diverged) return { kind: 'live' };
    const recorded = this.tape.callFor(turn, index, name, input);
    if (!recorded) {
      this.diverged = true;
      return { kind: 'live' };
    }
    if (recorded.result === undefined) {
      this.diverged = true;
      return { kind: 'in_doubt', recorded };
    }
    this.replayedCalls++;
    return { kind: 'replay', recorded: recorded as RecordedCall & { result: ToolResultJSON } };
  }
}

/** The fork's result for a replayed call: the parent's, under the fork's ids, saying where it came from. */
export function replayedOutput(
  decision: Exclude<CallDecision, { kind: 'live' }>,
  call: { toolCallId: string; providerToolCallId?: string },
  meta: ToolCallMeta,
  index: number,
): ExecuteToolOutput {
  const from = decision.recorded.toolCallId;
  if (decision.kind === 'in_doubt') {
    return {
      index,
      result: {
        name: decision.recorded.name,
        toolCallId: call.toolCallId,
        ...(call.providerToolCallId === undefined ? {} : { providerToolCallId: call.providerToolCallId }),
        executed: false,
        error: {
          name: 'InDoubtError',
          message: `Not executed: the parent run's call ${from} has no recorded outcome (it may or may not have happened); a recorded replay never runs it again`,
          recoverable: false,
        },
      },
    };
  }
  const recorded = decision.recorded.result;
  const result: ToolResultJSON = {
    ...recorded,
    toolCallId: call.toolCallId,
    ...(call.providerToolCallId === undefined ? {} : { providerToolCallId: call.providerToolCallId }),
    telemetry: { ...recorded.telemetry, durationMs: recorded.telemetry?.durationMs ?? 0, replayedFrom: from },
  };
  const hint: PolicyRetryHint | undefined = recorded.retryHint
    ? toPolicyRetryHint(recorded.retryHint, meta)
    : undefined;
  return { index, result, ...(hint ? { hint } : {}) };
}
