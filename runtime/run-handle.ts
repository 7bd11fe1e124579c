import { createRequire } from 'node:module';
import type { Observable } from 'rxjs';
import type { Subject } from 'rxjs/internal/Subject';
import type { SnapshotFrom } from 'xstate';
import { persistedSnapshotOf } from '../machines/persisted-snapshot.ts';
import { type RunAwaiting, runAwaitingOf } from '../machines/run-awaiting.ts';
import type {
  InDoubtResolution,
  PendingCall,
  RememberedApproval,
  RunContext,
} from '../machines/run-context.ts';
import type { RunActorRef, RunMachine } from '../machines/run-machine.ts';
import { deepFreeze } from '../policies/policy-json.ts';
import type { CapsState } from '../run/caps.ts';
import type { Message } from '../run/message.ts';
import type { RunEvent, RunStatus } from '../run/run-events.ts';
import { clipText, displayPath } from '../tools/preview-value.ts';
import type { ToolCatalog } from '../tools/tool-catalog.ts';
import type { ToolErrorJSON } from '../tools/tool-error.ts';
import { type ToolResult, type ToolResultJSON, toolResultFromJSON } from '../tools/tool-result.ts';
import { checkApprovalEdits } from './approval-edits.ts';
import type { PersistenceStatus } from './durable/run-persister.ts';
import { checkedInDoubtResolutions } from './in-doubt-resolutions.ts';
import {
  AnswerProblem,
  type CheckedToolResult,
  checkedClarification,
  checkedConfirmation,
  checkedToolResults,
  MAX_ANSWER_BY_CHARS,
} from './run-answers.ts';
import { capsState } from './steps/plan-step.ts';
import { approvalsToRemember } from './steps/remembered-approvals.ts';

// The two classes needed, each from its own module, loaded on the first `events$`: rxjs's index
// loads every operator (~100 ms), and even these two are ~35 ms of CPU of a cold
// `import('toolwarden')` that an app which never subscribes does not need (docs/packaging.md
// §Cost). On Node rxjs resolves to its CommonJS build for `import` and `require` alike (its
// exports map's `node` condition), so these are the very modules the app's `import 'rxjs'` loads:
// the stream is an rxjs Observable to the app's own operators (`instanceof`, `pipe`).
let rx:
  | { Observable: typeof import('rxjs/internal/Observable').Observable; Subject: typeof Subject }
  | undefined;
function rxjs(): NonNullable<typeof rx> {
  if (rx === undefined) {
    const require = createRequire(import.meta.url);
    rx = {
      Observable: (require('rxjs/internal/Observable') as typeof import('rxjs/internal/Observable'))
        .Observable,
      Subject: (require('rxjs/internal/Subject') as typeof import('rxjs/internal/Subject')).Subject,
    };
  }
  return rx;
}

/** What `run.result()` resolves to (docs/architecture.md). */
export interface RunOutcome {
  runId: string;
  status: 'completed' | 'failed' | 'canceled';
  finalResponse?: { text: string; data?: unknown };
  /** Why the run finalized, when a cap, the time budget or a policy ended it. */
  finalizeReason?: string;
  /** Every tool result of this run segment's handle, in the order they arrived. */
  toolResults: ToolResult[];
  /**
   * The run's messages, in an array of the app's own. The messages are the run's, deep-frozen
   * (read-only): on a memory store they are also the stored run's (docs/durability.md §Memory store).
   */
  transcript: Message[];
  caps: CapsState;
  /** Tokens the run's planner turns reported, summed (`PlanResult.usage`; zero for planners that report none). */
  usage: { inputTokens: number; outputTokens: number; totalTokens: number };
  /**
   * Money the run's planner turns cost (`costBudget`, docs/policies.md §Money): `spent` in
   * `currency` units and the budget's `limit`. Absent when nothing priced a turn.
   */
  cost?: { currency: string; spent: number; limit?: number };
  error?: ToolErrorJSON;
}

/**
 * Thrown when an answer does not fit what the run awaits: wrong state, unknown id, missing or
 * duplicate tool call ids, a result that fails the tool's output schema. The run stays where it
 * was, with nothing lost (docs/architecture.md).
 */
export class RunAnswerError extends Error {
  override readonly name = 'RunAnswerError';
  constructor(
    readonly runId: string,
    message: string,
  ) {
    super(`Run ${runId}: ${message}`);
  }
}

/** A tool result the app provides for an external tool call. */
export interface ProvidedToolResult {
  toolCallId: string;
  /** The tool's output (checked against the tool's `output` schema when it has one). */
  result?: unknown;
  /** Set instead of `result` when the external call failed. */
  error?: { message: string; recoverable?: boolean };
}

/** Maps an actor snapshot to the handle's status. */
export function runStatusOf(snapshot: SnapshotFrom<RunMachine>): RunStatus {
  // The top-level state read off the value, not by `matches` (XState resolves a state path each
  // call; this runs at every write and every `status` read).
  const top = topState(snapshot.value);
  if (snapshot.status === 'done') {
    if (top === 'completed') return 'completed';
    if (top === 'canceled') return 'canceled';
    return 'failed';
  }
  if (snapshot.status === 'error') return 'failed';
  return top === 'awaiting' ? 'awaiting' : 'running';
}

/** The top-level state of a state value: `awaiting` for `{ awaiting: 'clarification' }`. */
function topState(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  for (const key in value as object) return key;
  return undefined;
}

/** The dotted name of a snapshot's active leaf state: `awaiting.clarification`. */
export function stateName(snapshot: SnapshotFrom<RunMachine>): string {
  return stateValueName(snapshot.value);
}

/** A state value dotted (a module function: a closure made per call cost more than the walk). */
function stateValueName(value: unknown): string {
  return typeof value === 'string'
    ? value
    : Object.entries(value as Record<string, unknown>)
        .map(([key, child]) => `${key}.${stateValueName(child)}`)
        .join(',');
}

/** What the runtime tells a handle about its run's writes to the store (runtime/durable). */
export interface RunStorage {
  readonly status: PersistenceStatus;
  persisted(): Promise<void>;
}

/**
 * The app's handle on one run (docs/architecture.md): its events as an rxjs Observable (replayed from the
 * first event to any subscriber), its status, its result, and the answers it may await.
 *
 * A handle outlives its actor when the runtime evicts an awaiting run from memory: answering
 * through the handle restores the run first, and the handle follows the restored actor (events,
 * result), as long as the run is restored in this runtime.
 */
export class RunHandle {
  readonly runId: string;
  /**
   * Every event published so far, replayed to each new `events$` subscriber. The very objects
   * the run's store keeps when it keeps them in memory (the persister's immutable copies): a run
   * holds one copy of its log, not two (issue 29 item 3).
   */
  private replay: RunEvent[] = [];
  /**
   * Each replayed event as it is published, and the live-only events (a streaming planner's
   * deltas: to the subscribers of the moment, never replayed); made by the first `events$`
   * subscriber (most runs have none: ~0.3 KB each kept for the run's life, issue 29 item 3).
   */
  private subjects?: { replayed: Subject<RunEvent>; live: Subject<RunEvent> };
  /** `events$` ended (`close`, `lose`). */
  private ended = false;
  /** `result()`'s promise, made by its first call; settled by `settle` or `lose`. */
  private outcome?: Promise<RunOutcome>;
  private resolveOutcome?: (outcome: RunOutcome) => void;
  private rejectOutcome?: (error: Error) => void;
  /** Set when another process took the run over (a RunConflictError): this process stopped it. */
  private lostTo?: Error;
  private current: RunActorRef;
  private storageOf?: RunStorage;
  /** Set while the run is evicted: brings it back (the runtime rebinds this handle). */
  private revive?: () => Promise<unknown>;

  /** @internal Created by the runtime, which calls {@link settle} when the actor is final. */
  constructor(
    actor: RunActorRef,
    private readonly catalog: ToolCatalog,
  ) {
    this.runId = actor.getSnapshot().context.runId;
    this.current = actor;
  }

  /** The run's actor (after an eviction and restore, the restored one). */
  get actor(): RunActorRef {
    return this.current;
  }

  /**
   * Every RunEvent of this run, replayed from the first one to each new subscriber; a streaming
   * planner's deltas (`text_delta`, `tool_call_delta`) only as they happen, never replayed (a
   * model's tokens would pile up in memory for the run's life).
   *
   * Events are read-only: on a memory store they are the store's deep-frozen copies, shared by
   * every subscriber, `onEvent` hooks and the store (one copy per run).
   */
  get events$(): Observable<RunEvent> {
    // By hand rather than rxjs's `merge`, whose module pulls a dozen more into the core import.
    const { Observable: RxObservable, Subject } = rxjs();
    return new RxObservable<RunEvent>((subscriber) => {
      // The length is read on every pass: an event published by a subscriber's own `next` during
      // the replay is replayed in its place, and the subscription below starts after it.
      for (let index = 0; index < this.replay.length && !subscriber.closed; index++)
        subscriber.next(this.replay[index]!);
      if (this.ended) {
        subscriber.complete();
        return;
      }
      this.subjects ??= { replayed: new Subject<RunEvent>(), live: new Subject<RunEvent>() };
      const replayed = this.subjects.replayed.subscribe(subscriber);
      const live = this.subjects.live.subscribe((event) => subscriber.next(event));
      return () => {
        replayed.unsubscribe();
        live.unsubscribe();
      };
    });
  }

  /** The run's status as this process sees it; `failed` once another process took it over. */
  get status(): RunStatus {
    if (this.lostTo !== undefined) return 'failed';
    return runStatusOf(this.actor.getSnapshot());
  }

  /** The active state, dotted (`planning`, `awaiting.clarification`, ...). */
  get state(): string {
    return stateName(this.actor.getSnapshot());
  }

  /**
   * The run's live context: read-only. Its objects are the run's own, and on a memory store the
   * stored run's too (docs/durability.md §Memory store): a change made here would change the run.
   */
  get context(): RunContext {
    return this.actor.getSnapshot().context;
  }

  /**
   * Resolves when the run reached `completed`, `failed` or `canceled` and its last snapshot and
   * events are in the store (a read of the store right after sees them all), or a write of them
   * failed (then `storage` says `failing` and the runtime keeps retrying). Rejects only with a
   * `RunConflictError` when another process took the run over and this one stopped it
   * (docs/durability.md: only one process advances a run), or a `RunValueError` when the store
   * refused the run for good (a value or an argument it can never write).
   */
  result(): Promise<RunOutcome> {
    if (this.outcome) return this.outcome;
    const final = this.finalSnapshot();
    this.outcome =
      this.lostTo !== undefined
        ? Promise.reject(this.lostTo)
        : final
          ? this.stored(this.outcomeOf(final))
          : new Promise<RunOutcome>((resolve, reject) => {
              this.resolveOutcome = (outcome) => resolve(this.stored(outcome));
              this.rejectOutcome = reject;
            });
    // A rejection nobody awaits yet must not be reported as unhandled.
    this.outcome.catch(() => {});
    return this.outcome;
  }

  /**
   * What the run waits for now (`null`: nothing): the same shape `runtime.list()` gives. An
   * evicted run (its actor stopped, `durable.evictAfterMs`) still waits for what it did.
   */
  get awaiting(): RunAwaiting | null {
    const snapshot = this.actor.getSnapshot();
    if (snapshot.status !== 'active' && !this.revive) return null;
    // Its nested values (a confirmation's details, an example input) are the run's own: frozen.
    deepFreeze(snapshot.context.flow.awaiting);
    return runAwaitingOf(snapshot.context);
  }

  /** Stops the run from any non-final state (in-flight tool calls see their signal abort). */
  cancel(reason?: string): void {
    if (this.revive) {
      void this.revive().then(() => this.cancel(reason));
      return;
    }
    if (this.actor.getSnapshot().status === 'active') this.actor.send({ type: 'cancel', reason });
  }

  /**
   * Resolves once everything this run has emitted so far (snapshot and events) is in the
   * runtime's store (docs/durability.md).
   *
   * @throws RunPersistenceError when a write fails meanwhile (the runtime keeps retrying; call
   *   again to wait for the retry); RunConflictError when another owner took the run.
   */
  persisted(): Promise<void> {
    return this.storageOf?.persisted() ?? Promise.resolve();
  }

  /** Where the run's writes to the store stand: `saved`, `writing`, `failing` (with the error), ... */
  get storage(): PersistenceStatus {
    return this.storageOf?.status ?? { state: 'saved' };
  }

  /**
   * Answers an `await_clarification`.
   *
   * @throws RunAnswerError when the run is not awaiting this clarification, or the answer is not
   *   a non-empty string of at most 65,536 characters (`run-answers.ts`); nothing is sent then.
   */
  async provideClarification(answer: { id: string; answer: string }): Promise<void> {
    const checked = this.checked(() => checkedClarification(answer));
    await this.revive?.();
    const awaiting = this.awaitingFor('clarification');
    if (awaiting.kind !== 'clarification' || awaiting.clarification.id !== checked.id) {
      throw new RunAnswerError(
        this.runId,
        `no clarification "${clipText(checked.id, 100)}" is awaited (awaiting ${describeAwait(this.context)})`,
      );
    }
    this.actor.send({ type: 'provide.clarification', id: checked.id, answer: checked.answer });
  }

  /**
   * Answers an `await_external_tools`: exactly one result per awaited call, each passing the
   * tool's output schema when the tool is known and has one. An error's message is kept to its
   * first 4,096 characters.
   *
   * @throws RunAnswerError for a wrong state, an unknown, missing or duplicate `toolCallId`, a
   *   result JSON cannot carry (a BigInt, a cycle, a function) or over 16 MiB, an error whose
   *   `message` is not a string, or a result that fails the output schema; nothing is sent then.
   */
  async provideToolResults(results: ProvidedToolResult[]): Promise<void> {
    const provided = this.checked(() => checkedToolResults(results));
    await this.revive?.();
    const awaiting = this.awaitingFor('external_tools');
    if (awaiting.kind !== 'external_tools')
      throw new RunAnswerError(this.runId, 'not awaiting external tools');
    const calls = awaiting.externalTools.calls;
    const expected = new Map(calls.map((call) => [call.toolCallId, call]));
    const seen = new Set<string>();
    const converted: ToolResultJSON[] = [];
    for (const result of provided) {
      const id = clipText(result.toolCallId, 100);
      const call = expected.get(result.toolCallId);
      if (!call) throw new RunAnswerError(this.runId, `unknown toolCallId "${id}"`);
      if (seen.has(result.toolCallId)) {
        throw new RunAnswerError(this.runId, `duplicate result for toolCallId "${id}"`);
      }
      seen.add(result.toolCallId);
      converted.push(this.convertProvided(call.name, result));
    }
    const missing = calls.filter((call) => !seen.has(call.toolCallId)).map((call) => call.toolCallId);
    if (missing.length > 0)
      throw new RunAnswerError(this.runId, `missing results for toolCallIds: ${missing.join(', ')}`);
    this.actor.send({ type: 'provide.toolResults', id: awaiting.externalTools.id, results: converted });
  }

  /**
   * Approves or denies what the run awaits confirmation for. Only `id`, `approved`, `by` and
   * `reason` are read from `answer`.
   *
   * @throws RunAnswerError on a mismatch, an `approved` that is not a boolean, a `by` or `reason`
   *   that is not a string, or over 256 / 65,536 characters; nothing is sent then.
   */
  async confirm(answer: {
    id: string;
    approved: boolean;
    by?: string;
    reason?: string;
    /** Approve with edits: toolCallId → the input the call runs with instead (checked by the tool boundary). */
    edits?: Record<string, unknown>;
    /**
     * Remember the approval (docs/policies.md §Sticky approvals): later calls of the same tool
     * (`'tool'`) or of the same tool with the same canonical input (`'arguments'`), in this run
     * and the later runs of its thread, run without asking. Not recorded for a `high` risk call
     * (unless the runtime's `approvals.rememberHighRisk`): the `approval_remembered` event lists it
     * in `notRemembered`.
     */
    remember?: 'tool' | 'arguments';
  }): Promise<void> {
    const checked = this.checked(() => checkedConfirmation(answer));
    await this.revive?.();
    const awaiting = this.awaitingFor('confirmation');
    if (awaiting.kind !== 'confirmation' || awaiting.confirmation.id !== checked.id) {
      throw new RunAnswerError(
        this.runId,
        `no confirmation "${clipText(checked.id, 100)}" is awaited (awaiting ${describeAwait(this.context)})`,
      );
    }
    // Edits pass the tool boundary again; a refused one throws ApprovalEditRefusedError (with the
    // hint) and the run still waits (safety, issue 24 item 4).
    const { edits: given, forbiddenKeys, remember, ...rest } = checked;
    const edits = this.checked(() =>
      checkApprovalEdits(
        this.runId,
        this.context,
        { approved: checked.approved, edits: given, forbiddenKeys },
        this.catalog,
      ),
    );
    const remembered =
      remember === undefined
        ? undefined
        : approvalsToRemember(
            this.runId,
            checked.id,
            heldCalls(this.context),
            {
              remember,
              ...(checked.by === undefined ? {} : { by: checked.by }),
              ...(edits ? { edits } : {}),
            },
            Date.now(),
          );
    // The checked copy, never the app's object: its `type` or other members must not reach the run.
    this.actor.send({
      type: 'confirm',
      ...rest,
      ...(edits ? { edits } : {}),
      ...(remembered === undefined ? {} : remembered),
    });
  }

  /**
   * The approvals this run remembers (docs/policies.md §Sticky approvals), oldest first: those
   * recorded in it and those its thread's earlier runs handed on. `[]` for none.
   */
  get approvals(): readonly RememberedApproval[] {
    const approvals = this.actor.getSnapshot().context.flow.approvals ?? [];
    deepFreeze(approvals);
    return approvals;
  }

  /**
   * Forgets a remembered approval by id (`approvals[i].id`): its calls ask again. Records an
   * `approval_revoked` event. Works in any state but a final one.
   *
   * @throws RunAnswerError when the run has no such approval, or has ended; nothing is sent then.
   */
  async revokeApproval(approvalId: string, options: { by?: string } = {}): Promise<void> {
    if (typeof approvalId !== 'string') throw new RunAnswerError(this.runId, '`approvalId` must be a string');
    const by = options.by;
    if (by !== undefined && (typeof by !== 'string' || by.length > MAX_ANSWER_BY_CHARS))
      throw new RunAnswerError(
        this.runId,
        `\`by\` must be a string of at most ${MAX_ANSWER_BY_CHARS} characters`,
      );
    await this.revive?.();
    if (this.actor.getSnapshot().status !== 'active')
      throw new RunAnswerError(this.runId, 'the run has ended: its approvals can no longer change');
    if (!this.approvals.some((approval) => approval.id === approvalId))
      throw new RunAnswerError(this.runId, `no remembered approval "${clipText(approvalId, 100)}"`);
    this.actor.send({ type: 'approval.revoke', approvalId, ...(by === undefined ? {} : { by }) });
  }

  /**
   * Resolves the calls the run holds in doubt (`awaiting.kind === 'in_doubt'`, docs/durability.md
   * §Effects), every one of them, by `toolCallId`: `{ status: 'done', output }` (the effect
   * happened: `output` is recorded as the call's result, passing the tool's output schema when it
   * has one), `{ status: 'not_done' }` (it runs now, under the same idempotency key), or
   * `{ status: 'failed', error: { message } }` (its result is that error). Only `status`,
   * `output` and `error.message` are read.
   *
   * @throws RunAnswerError when the run is not in doubt, for an unknown or missing `toolCallId`,
   *   an unknown `status`, an output JSON cannot carry (or over 16 MiB) or that fails the output
   *   schema, an error message that is not a string; nothing is sent then.
   */
  async resolveInDoubt(resolutions: Record<string, InDoubtResolution>): Promise<void> {
    const given = this.checked(() => checkedInDoubtResolutions(resolutions));
    await this.revive?.();
    const awaiting = this.awaitingFor('in_doubt');
    if (awaiting.kind !== 'in_doubt') {
      throw new RunAnswerError(this.runId, `has no call in doubt (awaiting ${describeAwait(this.context)})`);
    }
    const calls = new Map(awaiting.calls.map((call) => [call.toolCallId, call]));
    const checked: Record<string, InDoubtResolution> = {};
    for (const [toolCallId, resolution] of given) {
      const call = calls.get(toolCallId);
      if (!call) throw new RunAnswerError(this.runId, `no call "${clipText(toolCallId, 100)}" is in doubt`);
      if (resolution.status !== 'done') {
        checked[toolCallId] = resolution;
        continue;
      }
      // The output passes the tool's output schema, as a provided external result does.
      const { result } = this.convertProvided(call.name, { toolCallId, result: resolution.output });
      checked[toolCallId] = { status: 'done', output: result };
    }
    const missing = awaiting.calls.filter((call) => !Object.hasOwn(checked, call.toolCallId));
    if (missing.length > 0) {
      throw new RunAnswerError(
        this.runId,
        `resolve every call in doubt at once; missing: ${missing.map((call) => call.toolCallId).join(', ')}`,
      );
    }
    this.actor.send({ type: 'resolve.inDoubt', resolutions: checked });
  }

  /** The persisted snapshot (JSON), as stores save it. */
  getPersistedSnapshot(): unknown {
    return persistedSnapshotOf(this.actor);
  }

  /** @internal The runtime feeds events here (for a memory store, the store's own copies). */
  publish(event: RunEvent): void {
    // After the end (`close`, `lose`), as rxjs subjects do: nothing more is kept or sent.
    if (this.ended) return;
    this.replay.push(event);
    this.subjects?.replayed.next(event);
  }

  /**
   * @internal The run waits (for an answer, a backoff): its replay list gives back the room it
   * grew by (an array grows by half again plus 16 slots: 17 slots for a first turn's ~5 events),
   * as the run may wait long (issue 29 item 3).
   */
  compact(): void {
    if (this.replay.length > 0) this.replay = this.replay.slice();
  }

  /** @internal A live-only event (a delta): to current subscribers, not replayed, not kept. */
  publishLive(event: RunEvent): void {
    this.subjects?.live.next(event);
  }

  /**
   * @internal The runtime lost the run to another owner and stopped its actor: `result()`
   * rejects with `error`, `status` says `failed`, `events$` ends.
   */
  lose(error: Error): void {
    if (this.lostTo !== undefined) return;
    this.lostTo = error;
    this.rejectOutcome?.(error);
    this.close();
  }

  /** @internal The runtime ends `events$` after the run's terminal event. */
  close(): void {
    this.ended = true;
    this.subjects?.replayed.complete();
    this.subjects?.live.complete();
  }

  /**
   * @internal The runtime's observer of the actor saw it final (done, or an actor error), after
   * queueing the final write: `result()` resolves with the outcome once that write is stored.
   */
  settle(): void {
    const final = this.finalSnapshot();
    if (!final) return;
    this.resolveOutcome?.(this.outcomeOf(final));
    this.resolveOutcome = undefined;
    this.rejectOutcome = undefined;
  }

  /** @internal The runtime reports the run's writes to the store here. */
  attachStorage(storage: RunStorage): void {
    this.storageOf = storage;
  }

  /** @internal The runtime evicted the run's actor; answers first call `revive` to restore it. */
  suspend(revive: () => Promise<unknown>): void {
    this.revive = revive;
  }

  /** @internal The run was restored into `actor`: the handle follows it from now on. */
  rebind(actor: RunActorRef): this {
    this.revive = undefined;
    this.current = actor;
    return this;
  }

  /**
   * The outcome, once the writes the final state led to are stored (or failed: retried). Rejects
   * when they never can be (the store refused the run for good, or another owner took it: `lose`),
   * as a run that ended in memory before its store refused it (a memory store writes after the
   * step) is not an outcome anyone else will see.
   */
  private async stored(outcome: RunOutcome): Promise<RunOutcome> {
    // The runtime settles the handle after queueing the final write; one tick later is as safe.
    await Promise.resolve();
    await this.storageOf?.persisted().catch(() => undefined);
    if (this.lostTo !== undefined) throw this.lostTo;
    return outcome;
  }

  /** The actor's snapshot when it is final (done, or an actor error); undefined while it runs. */
  private finalSnapshot(): SnapshotFrom<RunMachine> | undefined {
    const snapshot = this.current.getSnapshot();
    return snapshot.status === 'done' || snapshot.status === 'error' ? snapshot : undefined;
  }

  private awaitingFor(kind: string) {
    const awaiting = this.context.flow.awaiting;
    if (
      this.actor.getSnapshot().status !== 'active' ||
      !awaiting ||
      !this.actor.getSnapshot().matches('awaiting')
    ) {
      throw new RunAnswerError(this.runId, `is ${this.state}, not awaiting ${kind}`);
    }
    return awaiting;
  }

  /** Runs an answer's check; its problem becomes this run's RunAnswerError. */
  private checked<T>(check: () => T): T {
    try {
      return check();
    } catch (err) {
      if (err instanceof AnswerProblem) throw new RunAnswerError(this.runId, err.message);
      throw err;
    }
  }

  private convertProvided(toolName: string, provided: CheckedToolResult): ToolResultJSON {
    const base = { name: toolName, toolCallId: provided.toolCallId, executed: true };
    if ('error' in provided) {
      return {
        ...base,
        error: {
          name: 'ToolError',
          message: provided.error.message,
          recoverable: provided.error.recoverable,
        },
      };
    }
    const output = this.catalog.get(toolName)?.output;
    if (output) {
      const parsed = output.safeParse(provided.result);
      if (!parsed.success) {
        throw new RunAnswerError(
          this.runId,
          `result for "${clipText(provided.toolCallId, 100)}" does not match ${toolName}'s output schema: ${parsed.error.issues
            .slice(0, 5)
            .map((issue) => `${displayPath(issue.path) || '(root)'}: ${clipText(issue.message, 300)}`)
            .join('; ')}`,
        );
      }
      return { ...base, result: parsed.data };
    }
    return { ...base, result: provided.result };
  }

  private outcomeOf(snapshot: SnapshotFrom<RunMachine>): RunOutcome {
    const context = snapshot.context;
    const status = runStatusOf(snapshot) as RunOutcome['status'];
    const error =
      context.flow.error ??
      (snapshot.status === 'error'
        ? {
            name: 'RunError',
            message: String((snapshot.error as Error)?.message ?? snapshot.error),
            recoverable: false,
          }
        : undefined);
    return {
      runId: context.runId,
      status,
      // The app's own copies: its outcome, which it may change, and the stored run's objects.
      finalResponse: ownCopy(context.flow.finalResponse),
      finalizeReason: context.flow.finalize?.reason,
      toolResults: settledResults(this.replay),
      transcript: frozenTranscript(context.messages),
      caps: capsState(context),
      usage: usageOf(context),
      ...(context.flow.cost === undefined ? {} : { cost: { ...context.flow.cost } }),
      error: status === 'completed' ? undefined : ownCopy(error),
    };
  }
}

/**
 * A copy of `value` (`undefined` for null): JSON data, small (a final response, an error).
 * Member by member: `structuredClone` cost ~4 µs even for `{ text }`, once a run.
 */
function ownCopy<T>(value: T | null | undefined): T | undefined {
  if (value === null || value === undefined) return undefined;
  return plainCopy(value) as T;
}

function plainCopy(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(plainCopy);
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const members = value as Record<string, unknown>;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(members)) {
    // `copy.__proto__ = x` would set the prototype.
    if (key === '__proto__') return structuredClone(value);
    copy[key] = plainCopy(members[key]);
  }
  return copy;
}

/**
 * The results of the run's `tool_result` events, in order, a call's in-doubt record replaced by
 * its resolution when one came (docs/durability.md §Effects): a canceled run keeps it.
 */
function settledResults(events: readonly RunEvent[]): ToolResult[] {
  const results: ToolResult[] = [];
  let inDoubt: Map<string, number> | undefined;
  for (const event of events) {
    if (event.type !== 'tool_result') continue;
    const { result } = event;
    const earlier = inDoubt?.get(result.toolCallId);
    if (earlier !== undefined) {
      inDoubt!.delete(result.toolCallId);
      results[earlier] = toolResultFromJSON(result);
      continue;
    }
    if (result.inDoubt) {
      inDoubt ??= new Map();
      inDoubt.set(result.toolCallId, results.length);
    }
    results.push(toolResultFromJSON(result));
  }
  return results;
}

/**
 * The run's messages in a new array, each deep-frozen: the outcome hands out the run's own
 * messages (a copy of the transcript is O(run)), which stay the stored run's on a memory store.
 */
function frozenTranscript(messages: Message[]): Message[] {
  for (const message of messages) deepFreeze(message);
  return messages.slice();
}

function usageOf(context: RunContext): RunOutcome['usage'] {
  const { inputTokens, outputTokens } = context.flow.usage ?? { inputTokens: 0, outputTokens: 0 };
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens };
}

function describeAwait(context: RunContext): string {
  const awaiting = context.flow.awaiting;
  if (!awaiting) return 'nothing';
  if (awaiting.kind === 'clarification') return `clarification "${awaiting.clarification.id}"`;
  if (awaiting.kind === 'confirmation') return `confirmation "${awaiting.confirmation.id}"`;
  if (awaiting.kind === 'external_tools') return `external tools "${awaiting.externalTools.id}"`;
  if (awaiting.kind === 'in_doubt') return `${awaiting.calls.length} call(s) in doubt`;
  return 'a backoff';
}

/** The calls the run's confirmation holds (awaiting their approval), in call order. */
function heldCalls(context: RunContext): PendingCall[] {
  const awaiting = context.flow.awaiting;
  if (awaiting?.kind !== 'confirmation' || awaiting.toolCallIds === undefined) return [];
  const held = new Set(awaiting.toolCallIds);
  return context.batch.pending.filter((call) => call.status === 'confirm' && held.has(call.toolCallId));
}
