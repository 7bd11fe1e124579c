/**
 * One execution of the run workflow (`toolwardenRun`, docs/temporal.md §Workflow), in named steps:
 *
 * | step | method | does |
 * |---|---|---|
 * | 1. activities | `constructor` → `machine()` | the run machine with planner turns, checks, tool calls and reviews as activities, waits as timers |
 * | 2. actor | `constructor` | created (from a continued snapshot, migrated), observed: events to the log, state changes shown |
 * | 3. answers | `handle()` | signals, the confirmation update and the queries |
 * | 4. run | `run()` → `settle()` | started; waits until the run ends, crashes, or may continue as new (its transcript archived) |
 * | 5. hand on or return | `continueAsNew()` / `result()` | the next execution's input, or the run's outcome |
 *
 * Workflow code: Temporal's sandbox, no Node built-ins; every command (activities, timers,
 * patches, memo) is issued in the order the earlier single function issued it, so histories
 * recorded before replay unchanged.
 *
 * @module
 */
import {
  ApplicationFailure,
  condition,
  continueAsNew,
  isCancellation,
  patched,
  setHandler,
  sleep,
} from '@temporalio/workflow';
import { type Actor, createActor } from 'xstate';
import { inDoubtCallsToReview } from '../machines/in-doubt-outcomes.ts';
import { persistedSnapshotOf } from '../machines/persisted-snapshot.ts';
import type { RunContext } from '../machines/run-context.ts';
import { runMachine } from '../machines/run-machine.ts';
import { runSteps } from '../machines/run-steps.ts';
import type { RunEvent } from '../run/run-events.ts';
import type { ArchivedTranscript } from './transcript-ref.ts';
import { cancellable, WorkflowActivities } from './workflow-activities.ts';
import { ContinueAsNewGate, continuedSnapshot } from './workflow-continue.ts';
import { WorkflowEventLog } from './workflow-event-log.ts';
import {
  cancelSignal,
  clarificationSignal,
  confirmUpdate,
  eventsQuery,
  inDoubtSignal,
  statusQuery,
  toolResultsSignal,
  transcriptQuery,
} from './workflow-signals.ts';
import { awaitingOf, stateName, statusOf, WorkflowVisibility } from './workflow-status.ts';
import { WorkflowTranscript } from './workflow-transcript.ts';
import type {
  ContinuedRun,
  RunWorkflowInput,
  RunWorkflowResult,
  RunWorkflowStatus,
} from './workflow-types.ts';

type WorkflowMachine = ReturnType<typeof runMachine.provide>;

/** One execution of a run's workflow; `toolwardenRun` is `new RunWorkflow(input).run()`. */
export class RunWorkflow {
  private readonly activities: WorkflowActivities;
  private readonly log: WorkflowEventLog;
  private readonly transcript: WorkflowTranscript;
  private readonly gate: ContinueAsNewGate;
  private readonly visibility: WorkflowVisibility;
  private readonly actor: Actor<WorkflowMachine>;
  /** Which execution this is: 1, then one more each time the run continued as new. */
  private readonly execution: number;
  /** An error the actor reported (a bug in a step): the workflow fails with it. */
  private crashed: unknown;
  /** The terminal event, held until the state_changed into the final state is out. */
  private terminal: RunEvent | undefined;
  /** The state last reported by a state_changed event. */
  private previous: string | undefined;
  /**
   * Runs started before policies saw calls in doubt (`settling`) never ask them on replay: the
   * review is a local activity their history lacks. Asked at the start, as the gate's patches.
   */
  private readonly reviewsInDoubt: boolean;

  constructor(private readonly input: RunWorkflowInput) {
    // The machine copies the app's messages with structuredClone, which the sandbox lacks; they
    // are JSON (workflow input), so a JSON copy is the same.
    globalThis.structuredClone ??= <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
    const { continued } = input;
    this.activities = new WorkflowActivities(input);
    const machine = this.machine();
    this.log = new WorkflowEventLog(input);
    this.transcript = new WorkflowTranscript(continued);
    this.gate = new ContinueAsNewGate(input.history);
    this.reviewsInDoubt = patched('toolwarden.in-doubt-policies');
    this.actor = createActor(
      machine,
      continued
        ? // Handed on by a worker of any release, migrated to this one's snapshot format.
          { snapshot: continuedSnapshot(continued.snapshot) as never, input: input.run }
        : { input: input.run },
    );
    this.previous = continued?.state;
    this.execution = (continued?.executions ?? 0) + 1;
    this.visibility = new WorkflowVisibility(input);
    this.observe();
    if (!continued) {
      this.log.push({
        type: 'run_started',
        runId: input.run.runId,
        at: Date.now(),
        agentId: input.run.agent.id,
        ...(input.run.sessionId === undefined ? {} : { sessionId: input.run.sessionId }),
        labels: input.run.labels ?? {},
      } as RunEvent);
    }
    this.handle();
  }

  /** Runs this execution: the run's outcome, or (continue-as-new) never returns. */
  async run(): Promise<RunWorkflowResult> {
    this.actor.start();
    const archived = await this.settle();
    if (this.crashed !== undefined) {
      throw ApplicationFailure.nonRetryable(
        `The run machine failed: ${String((this.crashed as Error)?.message ?? this.crashed)}`,
        'RunStepError',
      );
    }
    if (this.actor.getSnapshot().status === 'active') return this.continueAsNew(archived);
    return this.result();
  }

  /** The run machine with its steps as activities (validation and review: local activities). */
  private machine(): WorkflowMachine {
    const { activities } = this;
    const { steps, checks } = activities;
    return runMachine.provide({
      actors: {
        runSteps: runSteps({
          plan: ({ input: step, controller }) => {
            // An idle point: the next execution restores the machine here and runs the turn.
            if (this.gate.due()) {
              this.gate.continuing = true;
              return new Promise<never>(() => {});
            }
            this.gate.planned += 1;
            const summary = `turn ${step.context.turn} · ${step.kind === 'finalize' ? 'finalize' : 'plan'}`;
            return cancellable(controller.signal, async () => {
              const { toolTimeoutsMs, ...output } = await this.readAfter(
                steps.plan.executeWithOptions({ ...activities.planOptions, summary }, [
                  this.transcript.planInput(step),
                ]),
              );
              Object.assign(activities.workerTimeouts, toolTimeoutsMs);
              return output;
            });
          },
          // Policies never read the transcript: it stays out of the local activities' inputs.
          validateBatch: ({ input: step, controller }) =>
            cancellable(controller.signal, () =>
              checks.validateBatch({ context: { ...step.context, messages: [] } }),
            ),
          executeTool: ({ input: step, controller }) =>
            cancellable(controller.signal, () =>
              this.readAfter(
                steps.executeTool.executeWithOptions(activities.toolOptions(step), [
                  // The run's trace context rides along, so the call's span joins the run's trace.
                  { ...step, traceContext: this.actor.getSnapshot().context.traceContext },
                ]),
              ),
            ),
          reviewResults: ({ input: step, controller }) =>
            cancellable(controller.signal, () =>
              checks.reviewResults({ context: { ...step.context, messages: [] } }),
            ),
          sleepUntil: ({ input: step }) => this.readAfter(sleep(Math.max(0, step.until - Date.now()))),
        }),
      },
      // Validation and review are activities (the tools and policies live in the worker).
      guards: {
        consultsPolicies: () => true,
        inDoubtToReview: ({ context }) => this.reviewsInDoubt && inDoubtCallsToReview(context).length > 0,
      },
      // A cancel while a tool runs needs no grace timer here: canceling an activity (TRY_CANCEL)
      // settles it at once as canceled, so `canceling` ends with it (the call in doubt), as before.
      actions: { requestCancelGrace: () => {} },
    });
  }

  /**
   * The events the in-process runtime's host adds, for the same log: run_started, state_changed,
   * and the terminal event held until the state_changed into the final state is out.
   */
  private observe(): void {
    const { actor, log } = this;
    actor.on('*', (event) => {
      const runEvent = event as RunEvent;
      if (
        runEvent.type === 'run_completed' ||
        runEvent.type === 'run_failed' ||
        runEvent.type === 'run_canceled'
      ) {
        this.terminal = runEvent;
      } else log.push(runEvent);
    });
    // XState's own unhandled-error reporting does nothing in the sandbox: observe errors here.
    actor.subscribe({
      next: () => {
        const state = stateName(actor.getSnapshot().value);
        if (state !== this.previous) {
          log.push({
            type: 'state_changed',
            runId: this.input.run.runId,
            at: Date.now(),
            state,
            previous: this.previous,
          } as RunEvent);
          this.previous = state;
          this.visibility.publish(this.status(), actor.getSnapshot().context);
        }
        if (this.terminal) {
          log.push(this.terminal);
          this.terminal = undefined;
        }
      },
      error: (error) => (this.crashed = error),
    });
  }

  private status(): RunWorkflowStatus {
    return statusOf(this.actor.getSnapshot(), this.log.count, this.execution);
  }

  /**
   * `pending`, with the history read in the activation that settles it: an activity's or a
   * timer's result, a point a replay repeats (ContinueAsNewGate).
   */
  private async readAfter<T>(pending: Promise<T>): Promise<T> {
    try {
      return await pending;
    } finally {
      this.gate.read();
    }
  }

  /** The queries, the answers' signals, and the confirmation as an update with a validator. */
  private handle(): void {
    const { actor } = this;
    setHandler(statusQuery, () => this.status());
    setHandler(eventsQuery, (from: number) => this.log.page(from));
    setHandler(transcriptQuery, (from: number, to: number) =>
      this.transcript.page(actor.getSnapshot().context.messages, from, to),
    );
    // A signal's activation is one a replay repeats: the history is read there (ContinueAsNewGate).
    const send = (event: Parameters<typeof actor.send>[0]) => {
      this.gate.read();
      actor.send(event);
    };
    setHandler(clarificationSignal, (answer) => send({ type: 'provide.clarification', ...answer }));
    setHandler(toolResultsSignal, (answer) => send({ type: 'provide.toolResults', ...answer }));
    setHandler(inDoubtSignal, ({ resolutions }) => send({ type: 'resolve.inDoubt', resolutions }));
    setHandler(cancelSignal, ({ reason }) =>
      send({ type: 'cancel', ...(reason === undefined ? {} : { reason }) }),
    );
    setHandler(
      confirmUpdate,
      (answer) => {
        send({ type: 'confirm', ...answer });
      },
      {
        // A wrong id is rejected to the caller, not swallowed by the machine's guard.
        validator: (answer) => {
          const now = awaitingOf(actor.getSnapshot().context);
          if (now?.kind !== 'confirmation' || now.id !== answer.id) {
            throw new Error(
              `The run awaits ${now ? `${now.kind} ${now.id ?? ''}`.trim() : 'nothing'}, not confirmation "${answer.id}"`,
            );
          }
        },
      },
    );
  }

  /**
   * Waits until the run ends, its actor crashes, or it may continue as new (at a planner turn, or
   * idle awaiting an answer; a backoff timer is restored from its stored deadline), then archives
   * the transcript of a run that goes on. A canceled workflow cancels the run.
   */
  private async settle(): Promise<ArchivedTranscript | undefined> {
    const { actor, gate } = this;
    const idleAwaiting = () => stateName(actor.getSnapshot().value).startsWith('awaiting') && gate.due();
    try {
      await condition(
        () =>
          actor.getSnapshot().status !== 'active' ||
          this.crashed !== undefined ||
          gate.continuing ||
          idleAwaiting(),
      );
      if (this.crashed === undefined && actor.getSnapshot().status === 'active' && gate.mayArchive) {
        return await this.transcript.archive(this.activities, this.input.run.runId);
      }
      return undefined;
    } catch (error) {
      if (isCancellation(error)) actor.send({ type: 'cancel', reason: 'the workflow was canceled' });
      throw error;
    }
  }

  /** Hands the run on to the next execution (the snapshot without the archived messages). */
  private continueAsNew(archivedNow: ArchivedTranscript | undefined): Promise<never> {
    const { actor, input, transcript } = this;
    const persisted = persistedSnapshotOf(actor) as { context: RunContext };
    const archived = archivedNow ?? transcript.archived;
    const next: ContinuedRun = {
      // Without the archived messages: what crosses is one turn's messages, not the run's.
      snapshot: archivedNow
        ? {
            ...persisted,
            context: {
              ...persisted.context,
              messages: persisted.context.messages.slice(archivedNow.length - transcript.base),
            },
          }
        : persisted,
      ...this.log.handedOn(),
      ...(this.previous === undefined ? {} : { state: this.previous }),
      sentMark: transcript.sentMark,
      ...(archived ? { archived } : {}),
      executions: this.execution,
      toolTimeoutsMs: this.activities.workerTimeouts,
    };
    actor.stop();
    // The app's first messages are in the snapshot's transcript (or its archive): not again.
    return continueAsNew<(input: RunWorkflowInput) => Promise<RunWorkflowResult>>({
      ...input,
      run: { ...input.run, messages: [] },
      continued: next,
    });
  }

  /** The run's outcome: status, answer or error (with its causes), the last results, usage. */
  private result(): RunWorkflowResult {
    const { flow } = this.actor.getSnapshot().context;
    return {
      status: this.status().status as RunWorkflowResult['status'],
      ...(flow.finalResponse ? { finalResponse: flow.finalResponse } : {}),
      ...(flow.error ? { error: flow.error } : {}),
      toolResults: this.log.results(),
      toolResultCount: this.log.toolResultCount,
      ...(flow.usage ? { usage: flow.usage } : {}),
      events: this.log.count,
      executions: this.execution,
    };
  }
}
