import { type CallbackActorLogic, type CallbackSnapshot, fromCallback, type Snapshot } from 'xstate';
import type { PolicyEffects } from '../run/policy-effects.ts';
import type { ElicitationAnswer, ElicitationRequest } from '../tools/elicitation.ts';
import {
  type ExecuteToolInput,
  type ExecuteToolOutput,
  type PlanActorInput,
  type PlanActorOutput,
  placeholderPorts,
  type ReviewResultsInput,
  type RunPort,
  type RunPorts,
  type SleepUntilInput,
  type TaskArgs,
  type ValidateBatchInput,
  type ValidateBatchOutput,
} from './run-ports.ts';

/**
 * Most tool calls of one batch that run at once. A batch larger than this runs in a window: each
 * finished call starts the next. The window bounds what a huge batch holds at once (its calls'
 * promises, controllers and timers; when each call was a child actor, XState's copies of the
 * `children` made a batch run all at once cost O(calls²)). Planner batches are a few calls; 32 at
 * once keeps every realistic batch fully parallel (docs/architecture.md §Executing).
 */
export const MAX_PARALLEL_TOOL_CALLS = 32;

/**
 * The run's `steps` actor: one child per run, invoked at the machine's root, that does a step's
 * asynchronous work (run-ports.ts) on request and answers with an event.
 *
 * Why one long-lived actor instead of an invoked actor per planner turn and per tool call (the
 * first design: "each call a child actor"): creating, starting and stopping an XState actor is most of what a step cost
 * (a machine that invokes two actors a step ran at 70 µs a step on the development machine, the
 * same machine answered by one long-lived actor at 20; issue 17). What the per-call actors were
 * for stays:
 *
 * - parallel calls: a batch runs in a window of {@link MAX_PARALLEL_TOOL_CALLS}, each result
 *   starting the next (here, not in the machine);
 * - per-call timeouts: `executeTool` bounds each call (runtime/steps/execute-tool.ts);
 * - cancel: stopping the run stops this actor, which aborts every port's `controller`;
 * - restore after a crash: a restored `steps` actor sends `steps.restored` to the run, whose
 *   working state requests its work again from the restored context (the calls without a result,
 *   with their stable `toolCallId`s; the same planner turn);
 * - inspection: every request and answer is an `@xstate.event` between the run actor and
 *   `steps`, carrying the call's `toolCallId`.
 */
export type StepRequest =
  | { type: 'plan'; input: PlanActorInput }
  | { type: 'validate'; input: ValidateBatchInput }
  | { type: 'tools'; calls: ExecuteToolInput[] }
  | { type: 'review'; input: ReviewResultsInput }
  | { type: 'sleep'; input: SleepUntilInput }
  /** A person's answer to a call's elicitation (`call.elicit`), handed to the waiting call. */
  | { type: 'elicited'; id: string; answer: ElicitationAnswer }
  /**
   * The run is canceling (run-machine.ts `canceling`): running calls are told to stop (their
   * signals abort) and answer as they end; queued ones never start and are answered not run.
   */
  | { type: 'abortTools' };

/** What `steps` sends the run actor. `output` and `error` are named as XState's done and error events name them. */
export type StepEvent =
  | { type: 'plan.done'; output: PlanActorOutput }
  | { type: 'plan.error'; error: unknown }
  | { type: 'validate.done'; output: ValidateBatchOutput }
  | { type: 'validate.error'; error: unknown }
  | { type: 'tool.done'; output: ExecuteToolOutput }
  | { type: 'tool.error'; index: number; toolCallId: string; error: unknown }
  | { type: 'review.done'; output: PolicyEffects }
  | { type: 'review.error'; error: unknown }
  | { type: 'sleep.done' }
  /**
   * A running call asks a person (`elicit()`, tools/call-tool.ts): one at a time, the next once the run
   * answered this one (`elicited`) or its call ended.
   */
  | { type: 'call.elicit'; elicitation: CallElicitation }
  /** Sent once by a `steps` actor restored from a snapshot: what was in flight is requested again. */
  | { type: 'steps.restored' };

/** A call's question to a person, as `steps` hands it to the run (`call.elicit`). */
export interface CallElicitation {
  /** `<toolCallId>:e<n>`: the id the answer names. */
  id: string;
  toolCallId: string;
  /** The tool id. */
  tool: string;
  request: ElicitationRequest;
}

/** The `steps` actor's input: set only on restore. */
export interface StepsInput {
  restored?: boolean;
}

/**
 * Longest run of tool-call starts, with what they set off, before the event loop gets a turn (ms).
 * The stretch is longer by what is in flight then (up to {@link MAX_PARALLEL_TOOL_CALLS} results
 * recorded, ~3 ms in a 10,000-call batch) and by any GC pause that lands in it (10–20 ms while a
 * large batch runs): 4, not 8, keeps such a stretch near 30 ms (issue 36 item 5).
 */
export const CALL_SLICE_MS = 4;

/**
 * A `tools` request of more calls than this waits for a macrotask before its first call when the
 * step that asked ran longer than {@link CALL_SLICE_MS} (scheduling it is O(calls)).
 */
const LARGE_BATCH_CALLS = 64;

/** The id of the run's `steps` actor (its `invoke` at the machine's root). */
export const STEPS_ACTOR_ID = 'steps';

/**
 * The `steps` actor logic over `ports` (missing ones throw "not provided", but `sleepUntil`).
 * Provide it as `machine.provide({ actors: { runSteps: runSteps(ports) } })`.
 *
 * A port's rejection (or throw) is answered with its error event; a port never runs twice for one
 * request, and a tool call whose `toolCallId` is running or queued is not queued again.
 */
export function runSteps(
  ports: Partial<RunPorts> = {},
): CallbackActorLogic<StepRequest, StepsInput | undefined> {
  const port: RunPorts = { ...placeholderPorts, ...ports };
  const logic = fromCallback<StepRequest, StepsInput | undefined>(({ input, sendBack, receive }) => {
    const steps = new Steps(port, sendBack);
    receive((request) => steps.receive(request));
    if (input?.restored) sendBack({ type: 'steps.restored' });
    return () => steps.stop();
  });
  // A restored actor says so on start (the callback sees `restored`), so the run requests again
  // what was in flight when its snapshot was taken.
  const restoreSnapshot = (snapshot: Snapshot<unknown>): CallbackSnapshot<StepsInput | undefined> => ({
    ...(snapshot as CallbackSnapshot<StepsInput | undefined>),
    input: { restored: true },
  });
  // The flag is the restored actor's own: what it persists is what a fresh one does.
  const getPersistedSnapshot = (snapshot: CallbackSnapshot<StepsInput | undefined>) =>
    snapshot.input === undefined ? snapshot : { ...snapshot, input: undefined };
  return { ...logic, restoreSnapshot, getPersistedSnapshot };
}

/**
 * What one `steps` actor keeps: the requests in flight that must hear of a stop, and the batch's
 * calls queued and running. A class, not closures over the callback's locals, and its collections
 * made when first needed and dropped when empty: a run waits for a person with none of them (a
 * run's heap while it waits is issue 29 item 3's).
 */
class Steps {
  /** The requests in flight that made a controller or wait for a stop: stopped with the actor. */
  private held: Set<StepTask<unknown>> | undefined;
  /** Calls of the batch not started yet, in order. */
  private queued: ExecuteToolInput[] | undefined;
  /** The `toolCallId`s queued or running: a call asked for twice (a restore) runs once. */
  private known: Set<string> | undefined;
  private running = 0;
  /** Calls' questions to a person, in the order asked; the first is put to the run. */
  private asks: PendingElicitation[] | undefined;
  private elicitations = 0;
  /** When the current run of call starts began, and whether a macrotask is due to go on. */
  private sliceStartedAt = sliceClock();
  private resumeDue = false;
  /** While the run takes in an answer of this actor's (`sendBack`, which steps it at once): since when. */
  private answeredAt: number | undefined;

  constructor(
    private readonly port: RunPorts,
    private readonly sendBack: (event: StepEvent) => void,
  ) {}

  receive(request: StepRequest): void {
    switch (request.type) {
      case 'plan':
        this.call(this.port.plan, request.input, 'plan');
        break;
      case 'validate':
        this.call(this.port.validateBatch, request.input, 'validate');
        break;
      case 'review':
        this.call(this.port.reviewResults, request.input, 'review');
        break;
      case 'sleep':
        this.call(this.port.sleepUntil, request.input, 'sleep');
        break;
      case 'abortTools':
        this.abortTools();
        break;
      case 'elicited':
        this.answerElicitation(request.id, request.answer);
        break;
      case 'tools': {
        this.known ??= new Set();
        this.queued ??= [];
        const { known, queued } = this;
        for (const next of request.calls) {
          if (known.has(next.call.toolCallId)) continue;
          known.add(next.call.toolCallId);
          queued.push(next);
        }
        // Asked while the run takes an answer of ours in: the stretch began with that answer, and
        // when the step it set off (a large batch admitted and scheduled) ran long already, the
        // first calls start after a macrotask (issue 36 item 5). A small batch starts at once.
        const large = request.calls.length > LARGE_BATCH_CALLS;
        this.sliceStartedAt = (large ? this.answeredAt : undefined) ?? sliceClock();
        this.pumpSoon();
      }
    }
  }

  /** The calls of the batch stop: queued ones are answered as never started, running ones aborted. */
  private abortTools(): void {
    this.declineAsks();
    const queued = this.queued ?? [];
    this.queued = undefined;
    for (const next of queued) this.known?.delete(next.call.toolCallId);
    // After the request's own step, as every answer.
    if (queued.length > 0) {
      Promise.resolve().then(() => {
        for (const { call, index } of queued) this.sendBack(notStartedAnswer(call, index));
      });
    }
    if (this.held) for (const task of [...this.held]) if (task.isTool) task.cancel();
  }

  /** Before the calls abort: a question left open when the run ends is declined, not canceled. */
  private declineAsks(): void {
    const asks = this.asks;
    this.asks = undefined;
    if (asks) for (const ask of asks) ask.reply({ action: 'decline', reason: 'the run ended' });
  }

  stop(): void {
    this.queued = undefined;
    this.declineAsks();
    const held = this.held;
    this.held = undefined;
    if (held) for (const task of held) task.stop();
  }

  hold(task: StepTask<unknown>): void {
    this.held ??= new Set();
    this.held.add(task);
  }

  release(task: StepTask<unknown>): void {
    if (this.held?.delete(task) && this.held.size === 0) this.held = undefined;
  }

  /** Runs `port` on `request`; answers with its `<kind>.done` or `<kind>.error` event. */
  private call<I, O>(port: RunPort<I, O>, request: I, kind: RequestKind, tool?: ExecuteToolInput): void {
    const task = new StepTask(request, this, kind, tool);
    let result: PromiseLike<O> | O;
    try {
      result = port(task);
    } catch (error) {
      // Answered as a rejection is: after the request's own step.
      Promise.resolve().then(() => task.failed(error));
      return;
    }
    Promise.resolve(result).then(
      (output) => task.done(output),
      (error: unknown) => task.failed(error),
    );
  }

  private pump(): void {
    const queued = this.queued;
    while (queued && this.running < MAX_PARALLEL_TOOL_CALLS && queued.length > 0) {
      const next = queued.shift()!;
      this.running++;
      this.call(this.port.executeTool, next, 'tool', next);
    }
    if (queued?.length === 0) this.queued = undefined;
  }

  /** Queues a call's question; the run hears one at a time (`call.elicit`). */
  elicit(
    tool: ExecuteToolInput,
    request: ElicitationRequest,
    reply: (answer: ElicitationAnswer) => void,
  ): void {
    const { toolCallId, name } = tool.call;
    this.asks ??= [];
    this.asks.push({ id: `${toolCallId}:e${++this.elicitations}`, toolCallId, tool: name, request, reply });
    this.askNext();
  }

  /** Hands the run the first question not yet put to it. */
  askNext(): void {
    const head = this.asks?.[0];
    if (head === undefined || head.put) return;
    head.put = true;
    const { id, toolCallId, tool, request } = head;
    this.sendBack({ type: 'call.elicit', elicitation: { id, toolCallId, tool, request } });
  }

  private answerElicitation(id: string, answer: ElicitationAnswer): void {
    const index = this.asks?.findIndex((ask) => ask.id === id) ?? -1;
    if (index < 0) return;
    const [ask] = this.asks!.splice(index, 1);
    if (this.asks!.length === 0) this.asks = undefined;
    ask!.reply(answer);
    this.askNext();
  }

  /** A tool call settled: the next calls of the batch may start. */
  settled(tool: ExecuteToolInput): void {
    this.running--;
    // Its questions lapse (the call no longer waits); the run left the wait on its `tool.done`.
    if (this.asks?.some((ask) => ask.toolCallId === tool.call.toolCallId)) {
      const lapsed = this.asks.filter((ask) => ask.toolCallId === tool.call.toolCallId);
      this.asks = this.asks.filter((ask) => ask.toolCallId !== tool.call.toolCallId);
      if (this.asks.length === 0) this.asks = undefined;
      for (const ask of lapsed) ask.reply({ action: 'cancel' });
    }
    if (this.known?.delete(tool.call.toolCallId) && this.known.size === 0) this.known = undefined;
    this.pumpSoon();
  }

  /**
   * The next calls of the batch, now or after a macrotask: calls that answer at once would
   * otherwise start each other in one chain of microtasks until the batch is done (issue 24
   * item 8: a 4,000-call batch stalled the event loop 2.9 s). After {@link CALL_SLICE_MS} of
   * starts the event loop runs its timers and I/O first. A one-call batch never waits.
   */
  private pumpSoon(): void {
    if (this.queued === undefined || this.resumeDue) return;
    if (sliceClock() - this.sliceStartedAt < CALL_SLICE_MS) {
      this.pump();
      return;
    }
    this.resumeDue = true;
    setImmediate(() => {
      this.resumeDue = false;
      this.sliceStartedAt = sliceClock();
      this.pump();
    });
  }

  answer(event: StepEvent): void {
    const outer = this.answeredAt;
    this.answeredAt ??= sliceClock();
    try {
      this.sendBack(event);
    } finally {
      this.answeredAt = outer;
    }
  }
}

/** A question of a running call, queued until the run answers it. */
interface PendingElicitation extends CallElicitation {
  reply: (answer: ElicitationAnswer) => void;
  /** Sent to the run (`call.elicit`). */
  put?: boolean;
}

/** Which port a request went to: its answer is `<kind>.done` or `<kind>.error`. */
type RequestKind = 'plan' | 'validate' | 'review' | 'sleep' | 'tool';

/**
 * One request's {@link TaskArgs}: its controller made on first read, held with its stop
 * listener (told when the actor stops) until the request settles, and the answer it sends. A
 * class, not an object literal with a getter and closures per request: those were functions made
 * for every request of every step.
 */
class StepTask<I> implements TaskArgs<I> {
  private own: AbortController | undefined;
  private stopListener: (() => void) | undefined;
  private cancelListener: (() => void) | undefined;
  private stopped = false;

  constructor(
    readonly input: I,
    private readonly steps: Steps,
    private readonly kind: RequestKind,
    private readonly tool: ExecuteToolInput | undefined,
  ) {}

  get controller(): AbortController {
    if (!this.own) {
      this.own = new AbortController();
      // Read after the actor stopped (a planner reading its signal late): aborted already.
      if (this.stopped) this.own.abort();
      else this.steps.hold(this);
    }
    return this.own;
  }

  get isTool(): boolean {
    return this.kind === 'tool';
  }

  onStop(listener: () => void): void {
    this.stopListener = listener;
    this.steps.hold(this);
  }

  onCancel(listener: () => void): void {
    this.cancelListener = listener;
    this.steps.hold(this);
  }

  /** The run is canceling: the port's cancel listener, or, without one, a stop. */
  cancel(): void {
    if (this.cancelListener) this.cancelListener();
    else this.stop();
  }

  elicit(request: ElicitationRequest, reply: (answer: ElicitationAnswer) => void): void {
    if (this.tool === undefined || this.stopped) reply({ action: 'cancel' });
    else this.steps.elicit(this.tool, request, reply);
  }

  /** The actor stopped: the listener, then the controller's abort. */
  stop(): void {
    this.stopped = true;
    this.stopListener?.();
    this.own?.abort();
  }

  done(output: unknown): void {
    const { kind } = this;
    this.finish(
      kind === 'tool'
        ? { type: 'tool.done', output: output as ExecuteToolOutput }
        : kind === 'plan'
          ? { type: 'plan.done', output: output as PlanActorOutput }
          : kind === 'validate'
            ? { type: 'validate.done', output: output as ValidateBatchOutput }
            : kind === 'review'
              ? { type: 'review.done', output: output as PolicyEffects }
              : { type: 'sleep.done' },
    );
  }

  failed(error: unknown): void {
    const { kind, tool } = this;
    this.finish(
      kind === 'tool'
        ? { type: 'tool.error', index: tool!.index, toolCallId: tool!.call.toolCallId, error }
        : kind === 'sleep'
          ? // A wait that fails ends as one that ran out.
            { type: 'sleep.done' }
          : { type: `${kind}.error`, error },
    );
  }

  /** The request settled: it is no longer held, the next calls may start, and the run hears `event`. */
  private finish(event: StepEvent): void {
    this.steps.release(this);
    if (this.tool) this.steps.settled(this.tool);
    this.steps.answer(event);
    // After the call's own answer: the run has left the wait of a call that ended.
    if (this.tool) this.steps.askNext();
  }
}

/** A queued call the run stopped before it started: not run, and known not to have run. */
function notStartedAnswer(call: ExecuteToolInput['call'], index: number): StepEvent {
  return {
    type: 'tool.done',
    output: {
      index,
      result: {
        name: call.name,
        toolCallId: call.toolCallId,
        executed: false,
        error: {
          name: 'ToolError',
          message: 'Not run: the run was canceled before this call started',
          recoverable: false,
        },
      },
    },
  };
}

/** `performance.now()`; `Date.now()` in Temporal's workflow sandbox, which has no `performance`. */
function sliceClock(): number {
  return globalThis.performance?.now() ?? Date.now();
}
