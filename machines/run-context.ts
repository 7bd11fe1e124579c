import type { Caps, FinalizeReason } from '../run/caps.ts';
import type { Message } from '../run/message.ts';
import type { AwaitClarification, AwaitConfirmation, AwaitExternalTools } from '../run/planner.ts';
import type { RememberedApproval } from '../run/run-events.ts';
import type { PolicyRetryHint } from '../tools/retry-hint.ts';
import type { ToolCallMeta } from '../tools/tool-call-meta.ts';
import type { ToolErrorJSON } from '../tools/tool-error.ts';
import type { InDoubtCause, ToolResultJSON } from '../tools/tool-result.ts';

/** Per-tool usage, as policies read it (`PolicyContext.tools`, docs/policies.md). */
export interface ToolStats {
  calls: number;
  failures: number;
  /** Failed calls of this tool in a row; the next call's `attempt` is this + 1. */
  consecutiveFailures: number;
  lastHint?: PolicyRetryHint;
}

/**
 * An edit the person who approves makes to a call's input (issue 24 item 4, "approve with
 * edits"): what they gave (`input`) and what the tool boundary made of it (`preparedInput`, the
 * validated input the tool runs with). Checked by the run handle (runtime/approval-edits.ts),
 * carried by the `confirm` event.
 */
export interface ApprovalEdit {
  toolCallId: string;
  input: unknown;
  preparedInput: Record<string, unknown>;
  droppedFields?: string[];
}

/** One call of the batch in flight, in the order the planner proposed it. */
export interface PendingCall {
  /** The run's id for the call: `<turnId>:c<n>`, the idempotency key (docs/tool-boundary.md §Vocabulary). */
  toolCallId: string;
  /** The id the planner gave the call (a provider's `call_0`), kept for the transcript. */
  providerToolCallId?: string;
  name: string;
  /** What the planner sent (object or JSON text). */
  input: unknown;
  attempt: number;
  /** proposed → admitted (validated, policy-approved) | rejected (result set) | confirm (waits approval) */
  status: 'proposed' | 'admitted' | 'rejected' | 'confirm';
  /** The validated input, set when admitted. */
  preparedInput?: Record<string, unknown>;
  /** Injected fields the model tried to set (dropped). */
  droppedFields?: string[];
  /**
   * `__proto__`/`constructor`/`prototype` keys (paths in `input`) a code planner's object input
   * had, left out of its JSON copy (`PlanActorOutput.forbiddenKeys`): the boundary refuses the call.
   */
  forbiddenKeys?: string[];
  /**
   * The person who approved the call changed its input: the validated input before the edit
   * (`original`), the edit as given (`input`), and who (`by`). `preparedInput` is the edited one.
   */
  edited?: { original: Record<string, unknown> | undefined; input: unknown; by?: string };
  /**
   * The tool has no `execute`: the app runs the call. Set when admitted; the run awaits its
   * result in `awaiting.externalTools` once the rest of the batch is done.
   */
  external?: true;
  /**
   * Started by a release before calls in doubt (snapshot format 1, `V1_TO_V2`), whose contract
   * was to run a call in flight again under its `toolCallId`: restored, it is run again as that
   * release would have, not held in doubt.
   */
  restoreAs?: 'rerun';
  /**
   * What the approver is shown of a call waiting for approval, from the tool's `summary`, `risk`
   * and `permissions` (docs/policies.md §Permissions and risk); set when the call waits.
   */
  approval?: ApprovalFacts;
  /**
   * A remembered approval and this call (docs/policies.md §Sticky approvals): the person's
   * approval of it was remembered (`recorded`), or it ran without asking under one given earlier
   * in the run or its thread (`applied`).
   */
  remembered?: { how: 'recorded' | 'applied'; approvalId: string; scope: RememberScope; by?: string };
  /**
   * An admitted call that runs while other calls of its batch wait for approval (its tool's or the
   * runtime's `runUnapproved: 'parallel'`, docs/policies.md §Mixed batches); admitted calls
   * without it wait for the approval with them.
   */
  runAhead?: true;
  /** A person approved the call (it waited in `awaiting.confirmation`). */
  approved?: true;
}

/** A held call whose approval was not remembered though `remember` was given, and why (`high_risk`). */
export interface NotRemembered {
  toolCallId: string;
  tool: string;
  reason: 'high_risk';
}

/** What a remembered approval covers: every later call of the tool, or those with the same canonical input. */
export type RememberScope = 'tool' | 'arguments';

export type { RememberedApproval } from '../run/run-events.ts';

/** A call's approval facts: its summary, risk and the permissions it needs (those the run lacks in `missing`). */
export interface ApprovalFacts {
  summary?: string;
  risk?: 'low' | 'medium' | 'high';
  permissions?: string[];
  /** Permissions the run was not granted (a policy sent the call for approval instead of refusing it). */
  missing?: string[];
  /**
   * `false`: a `remember` given with the approval is not recorded for this call (a `high` risk
   * call, unless the runtime's `approvals.rememberHighRisk`); absent: it is.
   */
  rememberable?: false;
}

/** One call a confirmation holds, as the approver sees it (run.awaiting, events, spans, the inspector, MCP). */
export interface ConfirmationCall extends ApprovalFacts {
  toolCallId: string;
  tool: string;
  input: unknown;
}

/** What the run waits for in `awaiting` (docs/architecture.md); deadlines are epoch-ms timestamps. */
export type AwaitState =
  | {
      kind: 'clarification';
      clarification: AwaitClarification & { missingFields: string[] };
      /** Set when a running call asks (`awaiting.elicitation`): the answer goes to the call. */
      elicitation?: ElicitationMark;
    }
  | { kind: 'external_tools'; externalTools: AwaitExternalTools }
  | {
      kind: 'confirmation';
      confirmation: AwaitConfirmation;
      toolCallIds?: string[];
      /** A descriptor per held call (absent for a planner's own confirmation). */
      calls?: ConfirmationCall[];
      /** Set when a running call asks (`awaiting.elicitation`): the answer goes to the call. */
      elicitation?: ElicitationMark;
    }
  | { kind: 'backoff'; until: number }
  | { kind: 'in_doubt'; calls: InDoubtCall[] };

/**
 * Which running call asks (`elicit()`, docs/mcp.md §Elicitation): the question is a
 * clarification or confirmation whose answer is handed to the call, not to the planner.
 */
export interface ElicitationMark {
  toolCallId: string;
  /** The tool id. */
  tool: string;
}

/**
 * A call whose outcome is unknown (docs/durability.md §Effects): started, its end never recorded,
 * and its tool neither re-runnable nor able to reconcile it. The run waits in `awaiting.inDoubt`
 * until each is resolved (`runtime.resolveInDoubt`).
 */
export interface InDoubtCall {
  toolCallId: string;
  name: string;
  /** The validated input the call was started with. */
  input: Record<string, unknown>;
  /** When it was started, epoch ms, when the run recorded it. */
  startedAt?: number;
  cause: InDoubtCause;
}

/**
 * How a call in doubt was settled (`runtime.resolveInDoubt`): its effect happened (`done`, with
 * the output to record), did not (`not_done`: it runs now, under the same idempotency key), or
 * it failed (`failed`, with the error the planner sees).
 */
export type InDoubtResolution =
  | { status: 'done'; output: unknown }
  | { status: 'not_done' }
  | { status: 'failed'; error: { message: string } };

/**
 * The run actor's context. JSON only (no class instances, no functions), so a persisted
 * snapshot round-trips through any store; ToolErrors are kept in their JSON form.
 *
 * At most {@link MAX_CONTEXT_KEYS} top-level keys: XState's `assign` builds each new context with
 * `Object.assign({}, context, update)`, and V8 (Node 20) turns an object that gets 20 or more
 * properties that way into a dictionary-mode object, after which every assign costs 12–18 µs
 * instead of ~1 µs (measured on the `npm run bench` loop: ~100 µs per step). The fields policies
 * read stay at the top; the machine's own bookkeeping lives in {@link RunContext.batch} and
 * {@link RunContext.flow}.
 */
export interface RunContext {
  runId: string;
  agent: { id: string; name: string };
  sessionId?: string;
  labels: Record<string, string>;
  /** Epoch ms. */
  startedAt: number;
  messages: Message[];
  /** Planner turns taken so far; the current turn's id is `${runId}:t${turn}`. */
  turn: number;
  /** Configured caps: no policy can go above them. */
  ceilings: Caps;
  /** Effective caps (ceilings tightened by policies). */
  caps: Caps;
  /** Calls proposed so far, counted against `maxToolCalls`. */
  toolCalls: number;
  consecutiveFailures: number;
  toolStats: Record<string, ToolStats>;
  /** Tool id → who disabled it (`app`, a policy name, `retry_cap`). */
  disabledTools: Record<string, string>;
  /** When set, the next planner turn sees only these tools. */
  restrictTo: string[] | null;
  /**
   * The run's most recent hints, in order: a bounded window (hint-window.ts, at most 64), not
   * every hint of the run; `toolStats` sums up the earlier ones per tool.
   */
  hints: PolicyRetryHint[];
  /** The policy engine's own JSON state. */
  policyState: unknown;
  /** W3C trace context of the run's root span, so a resumed run continues its trace (docs/telemetry.md). */
  traceContext: Record<string, string> | null;
  batch: BatchState;
  flow: FlowState;
}

/** The tool batches: the one in flight, the last one (for `planResume`), and what is unreviewed. */
export interface BatchState {
  pending: PendingCall[];
  /** Results of the batch in flight, aligned with `pending`; null until that call is done. */
  results: (ToolResultJSON | null)[];
  /** Results handed to the next `planResume`, in call order. */
  lastResults: ToolResultJSON[];
  /**
   * Results folded since the policies were last consulted: the batch `resuming` reviews. Empty
   * when the run resumes from an answer, so a batch is never reviewed twice.
   */
  newResults: ToolResultJSON[];
  /** Hints produced since the policies were last consulted. */
  newHints: PolicyRetryHint[];
  /**
   * The restriction the batch's turn was planned under (`restrictTo` of that turn), so a call to
   * a tool the planner was not shown is refused like a disabled one. Absent: no restriction.
   */
  restrictedTo?: string[];
}

/** Where the run is headed: what it awaits, what it hands the next turn, and how it ends. */
export interface FlowState {
  awaiting: AwaitState | null;
  /** Answers handed to the next `planResume`. */
  answer: {
    clarification?: { id: string; answer: string };
    confirmation?: { id: string; approved: boolean; by?: string; reason?: string };
  } | null;
  /**
   * Why the run is finalizing, and when it began to (epoch ms): the finalizing turn may run
   * until the later of the time budget's end and `at`, plus the runtime's grace.
   */
  finalize: { reason: FinalizeReason; at: number; policy?: string; note?: string } | null;
  /** Set by the last policy consultation; read by the routing guards. */
  effects: {
    fail?: { reason: string };
    /** With the policy that decided it and its note, for the finalizing turn's message. */
    finalize?: { reason: string; policy?: string; note?: string };
    backoffUntil?: number;
    awaitClarification?: AwaitClarification;
    /** A policy's `confirm` for the batch being admitted: what the person is shown. */
    confirm?: { prompt?: string; details?: unknown; policy: string; error?: string };
  } | null;
  finalResponse: { text: string; data?: unknown } | null;
  error: ToolErrorJSON | null;
  cancelReason: string | null;
  /**
   * The permissions the run was started with (`runtime.start({ grants })`), checked against each
   * call's tool `permissions`. Absent: none.
   */
  grants?: string[];
  /**
   * Approvals a person asked the run to remember, oldest first, at most
   * {@link MAX_REMEMBERED_APPROVALS}; a thread's next run starts with its last run's.
   * Absent in snapshots written before it existed: none.
   */
  approvals?: RememberedApproval[];
  /** Tokens the planner turns reported (`PlanResult.usage`), summed. */
  usage: { inputTokens: number; outputTokens: number };
  /**
   * Money the planner turns cost (`PlanResult.cost`, set by `costBudget`): `spent` in `currency`
   * units, and the budget's `limit`. Absent until a turn reports a cost.
   */
  cost?: { currency: string; spent: number; limit?: number };
  /**
   * Time the run spent awaiting someone outside it (a clarification, external tool results, a
   * confirmation), ms: it does not count against the time budget, so a person may answer days
   * later (docs/architecture.md §Awaiting). A backoff is the run's own wait and counts.
   * Absent in snapshots written before it existed: 0.
   */
  awaitedMs?: number;
  /** When the current wait for an answer began, epoch ms; null when not awaiting one. */
  awaitingSince?: number | null;
  /**
   * Waits for an answer so far (clarifications, external tool results, confirmations), held to
   * `caps.maxAwaits`. Absent in snapshots written before it existed: 0.
   */
  awaits?: number;
  /**
   * When the batch's calls were last started (entering `executing`), epoch ms: a call left in
   * doubt by a crash says when it began (docs/durability.md §Effects). Absent in snapshots
   * stored before it existed.
   */
  callsStartedAt?: number;
  /**
   * The batch's calls are running already: the run left `executing` for a call's question
   * (`awaiting.elicitation`), so entering `executing` again starts none (it clears this).
   */
  callsRunning?: boolean;
  /**
   * The calls in doubt (toolCallIds) that `onInDoubt` policies decided to ask a person about:
   * not asked about again while the run waits in `awaiting.inDoubt`. Cleared by the resolution.
   */
  inDoubtReviewed?: string[];
}

/**
 * The batch's empty lists, one frozen array shared by every run: the run replaces its context's
 * members, never changes them in place (XState's `assign`), so an empty list need not be a run's
 * own (32 bytes each, five in a new run's batch, four in a batch between turns).
 */
export const NO_CALLS: never[] = Object.freeze([]) as never[];

/** Remembered approvals a run keeps; past it, the oldest is forgotten (its calls ask again). */
export const MAX_REMEMBERED_APPROVALS = 100;

/** See {@link RunContext}: one more top-level key and XState's assigns get ~15× slower. */
export const MAX_CONTEXT_KEYS = 19;

/** What `createActor(runMachine, { input })` takes. */
export interface RunInput {
  runId: string;
  agent: { id: string; name?: string };
  sessionId?: string;
  labels?: Record<string, string>;
  messages: Message[];
  caps: Caps;
  /** Epoch ms; defaults to now. */
  startedAt?: number;
  disabledTools?: Record<string, string>;
  traceContext?: Record<string, string> | null;
  /** The user's scopes (`runtime.start({ grants })`). */
  grants?: string[];
  /** Remembered approvals the run starts with: its thread's (`runtime.continueSession`). */
  approvals?: RememberedApproval[];
}

export function turnId(context: Pick<RunContext, 'runId' | 'turn'>): string {
  const last = turnIds.get(context.runId);
  if (last !== undefined && last.turn === context.turn) return last.id;
  const id = `${context.runId}:t${context.turn}`;
  if (last !== undefined) {
    last.turn = context.turn;
    last.id = id;
  } else {
    if (turnIds.size >= MAX_TURN_IDS) turnIds.clear();
    turnIds.set(context.runId, { turn: context.turn, id });
  }
  return id;
}

/**
 * Each run's current turn id, made once a turn: a run's events keep theirs for the run's life,
 * and a new string per call was ~2.5 equal 32-byte strings a turn, plus the tool call ids built
 * on each (issue 29 item 3). Bounded: past it, forgotten all at once (a miss only makes the string again).
 */
const turnIds = new Map<string, { turn: number; id: string }>();
const MAX_TURN_IDS = 4096;

/**
 * Run labels that link a child run to the tool call that started it (agent-as-tool, docs/tool-boundary.md).
 * Labels, not context keys: they travel with the run into snapshots, events and spans as they are.
 */
export const PARENT_RUN_LABEL = 'toolwarden.parent_run_id';
/** Label a child run (agent-as-tool) carries with its parent's tool call id. */
export const PARENT_TOOL_CALL_LABEL = 'toolwarden.parent_tool_call_id';

/** The ToolCallMeta of one call of the run's current turn (docs/tool-boundary.md §Vocabulary). */
export function toolCallMeta(
  context: Pick<RunContext, 'runId' | 'turn' | 'sessionId' | 'agent' | 'labels'>,
  call: { toolCallId: string; providerToolCallId?: string; attempt: number },
): ToolCallMeta {
  const parentToolCallId = context.labels[PARENT_TOOL_CALL_LABEL];
  return {
    runId: context.runId,
    sessionId: context.sessionId,
    turnId: turnId(context),
    toolCallId: call.toolCallId,
    providerToolCallId: call.providerToolCallId,
    parentToolCallId,
    agentId: context.agent.id,
    attempt: call.attempt,
  };
}
