/**
 * What each run event becomes in telemetry (docs/telemetry.md; the plugin's `onEvent`):
 *
 * | event | becomes |
 * |---|---|
 * | `run_started` | the segment `onRunStart` opened is confirmed |
 * | `run_resumed` | the segment before is the stored one; a run restored working opens a segment |
 * | `state_changed` to `awaiting.*` | segment ends, `toolwarden.run.status=awaiting`, `toolwarden.run.awaiting` |
 * | `state_changed` to a working state | a segment opens if none is |
 * | `tool_result` | instant tool span (if needed); `toolwarden.tool.calls` |
 * | `retry_hint` | `toolwarden.retry_hints` (the span event comes from the result's hint) |
 * | `policy_decision` | `toolwarden.policy_decision` span event on the segment; `toolwarden.policy.decisions` |
 * | `run_completed` / `run_failed` / `run_canceled` | segment ends with that status (failed: ERROR, `error.type`) |
 *
 * @module
 */

import type { Attributes } from '@opentelemetry/api';
import type { RunInfo } from '../plugins/define-plugin.ts';
import { isSpanContextValid, SpanStatusCode } from '../plugins/otel-api.ts';
import type { RunEvent } from '../run/run-events.ts';
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_TOOLWARDEN_POLICY_DECISION_DETAIL,
  ATTR_TOOLWARDEN_POLICY_DECISION_KIND,
  ATTR_TOOLWARDEN_POLICY_HOOK,
  ATTR_TOOLWARDEN_POLICY_NAME,
  ATTR_TOOLWARDEN_POLICY_NOTE,
  ATTR_TOOLWARDEN_RETRY_HINT_REASON,
  ATTR_TOOLWARDEN_RUN_AWAITING,
  ATTR_TOOLWARDEN_RUN_FINALIZE_REASON,
  ATTR_TOOLWARDEN_TOOL_CALL_FINGERPRINT,
  ATTR_TOOLWARDEN_TOOL_CALL_ID,
  ATTR_TOOLWARDEN_TURN_ID,
  EVENT_TOOLWARDEN_POLICY_DECISION,
} from './attributes.ts';
import type { RunSegments } from './run-segments.ts';
import { toJson } from './span-values.ts';
import type { ToolSpans } from './tool-spans.ts';

/** `toolwarden.policy.decision.kind`: the decision's effect kinds joined with `,`; `note` when none. */
export function policyDecisionKind(kinds: readonly string[]): string {
  return kinds.length === 0 ? 'note' : kinds.join(',');
}

/** What the events are recorded on. */
export interface RunEventTelemetry {
  segments: RunSegments;
  tools: ToolSpans;
}

const FINAL_STATES = new Set(['completed', 'failed', 'canceled']);
const AWAIT_KINDS: Record<string, string> = {
  clarification: 'clarification',
  externalTools: 'external_tools',
  confirmation: 'confirmation',
  backoff: 'backoff',
};

type EventOf<T extends RunEvent['type']> = Extract<RunEvent, { type: T }>;

/** Records one run event (see the module's table). Never throws for an event of another type. */
export function recordRunEvent(parts: RunEventTelemetry, event: RunEvent, run: RunInfo): void {
  const { segments } = parts;
  switch (event.type) {
    case 'run_started': {
      const segment = segments.get(run.runId);
      if (segment) segment.started = true;
      return;
    }
    case 'run_resumed':
      // Back from the store: the segment before is the one it kept (this process's memory of
      // the run may be stale: another process may have advanced it since).
      segments.remember(run.runId, { state: event.state, restored: true });
      // Restored working (a crash cut its segment short): it works again at once.
      if (!event.state.startsWith('awaiting')) segments.ensure(run);
      return;
    case 'state_changed':
      stateChanged(segments, event, run);
      return;
    case 'tool_result':
      parts.tools.fromResult(event, run);
      return;
    case 'retry_hint':
      retryHint(parts, event, run);
      return;
    case 'policy_decision':
      policyDecision(segments, event, run);
      return;
    case 'run_completed':
      // A run canceled or ended while awaiting gets a (short) segment that says so.
      segments.ensure(run);
      segments.close(run.runId, 'completed', (span) => {
        if (event.finalizeReason)
          span.setAttribute(ATTR_TOOLWARDEN_RUN_FINALIZE_REASON, event.finalizeReason);
      });
      return;
    case 'run_failed':
      segments.ensure(run);
      segments.close(
        run.runId,
        'failed',
        (span) => {
          span.setAttribute(ATTR_ERROR_TYPE, event.error.name || 'Error');
          span.setStatus({ code: SpanStatusCode.ERROR, message: event.error.message });
        },
        event.error.name || 'Error',
      );
      return;
    case 'run_canceled':
      segments.ensure(run);
      segments.close(run.runId, 'canceled');
      return;
    default:
      return;
  }
}

/** Into an await: the segment ends (and is remembered for the next one's link); else one opens. */
function stateChanged(segments: RunSegments, event: EventOf<'state_changed'>, run: RunInfo): void {
  if (event.state.startsWith('awaiting')) {
    const segment = segments.get(run.runId);
    segments.close(run.runId, 'awaiting', (span) => {
      const kind = AWAIT_KINDS[event.state.slice('awaiting.'.length)];
      if (kind) span.setAttribute(ATTR_TOOLWARDEN_RUN_AWAITING, kind);
    });
    const ended = segment?.span.spanContext();
    if (ended && isSpanContextValid(ended)) {
      segments.remember(run.runId, { context: ended, state: event.state, restored: false });
    }
  } else if (!FINAL_STATES.has(event.state)) {
    segments.ensure(run);
  }
}

function retryHint(parts: RunEventTelemetry, event: EventOf<'retry_hint'>, run: RunInfo): void {
  const segment = parts.segments.ensure(run);
  const { hint } = event;
  if (segment.recording) {
    segment.attempts ??= new Map();
    segment.attempts.set(hint.toolCallId, hint.attempt);
  }
  if (segment.instruments.recording) {
    segment.instruments.retryHints.add(1, {
      [ATTR_TOOLWARDEN_RETRY_HINT_REASON]: hint.reason,
      [ATTR_GEN_AI_TOOL_NAME]: parts.tools.metricTool(hint.tool, hint.reason),
    });
  }
}

function policyDecision(segments: RunSegments, event: EventOf<'policy_decision'>, run: RunInfo): void {
  const segment = segments.ensure(run);
  const { decision } = event;
  if (!segment.recording && !segment.instruments.recording) return;
  const kind = policyDecisionKind(decision.kinds);
  segment.instruments.policyDecisions.add(1, {
    [ATTR_TOOLWARDEN_POLICY_NAME]: decision.policy,
    [ATTR_TOOLWARDEN_POLICY_DECISION_KIND]: kind,
  });
  if (!segment.recording) return;
  const attributes: Attributes = {
    [ATTR_TOOLWARDEN_POLICY_NAME]: decision.policy,
    [ATTR_TOOLWARDEN_POLICY_HOOK]: decision.hook,
    [ATTR_TOOLWARDEN_POLICY_DECISION_KIND]: kind,
    [ATTR_TOOLWARDEN_POLICY_DECISION_DETAIL]: toJson(decision.decision),
    [ATTR_TOOLWARDEN_TURN_ID]: event.turnId,
  };
  if (decision.fingerprint !== undefined)
    attributes[ATTR_TOOLWARDEN_TOOL_CALL_FINGERPRINT] = decision.fingerprint;
  if (decision.toolCallId !== undefined) attributes[ATTR_TOOLWARDEN_TOOL_CALL_ID] = decision.toolCallId;
  if (decision.tool !== undefined) attributes[ATTR_GEN_AI_TOOL_NAME] = decision.tool;
  if (decision.note) attributes[ATTR_TOOLWARDEN_POLICY_NOTE] = decision.note;
  segment.span.addEvent(EVENT_TOOLWARDEN_POLICY_DECISION, attributes);
}
