import type { RunContext } from '../machines/run-context.ts';
import { definePlugin, type Plugin } from '../plugins/define-plugin.ts';
import type { Policy } from '../policies/define-policy.ts';
import type { Caps } from '../run/caps.ts';
import type { Planner, PlanResult } from '../run/planner.ts';
import type { PlannerTurnEvent, RunEvent } from '../run/run-events.ts';
import { type CompareOptions, compareRuns, type RunComparison } from '../runtime/compare-runs.ts';
import { createRuntime } from '../runtime/create-runtime.ts';
import { unpackSnapshot } from '../runtime/durable/snapshot-codec.ts';
import { positionOf, RecordedReplay, ReplayTape, replayedOutput } from '../runtime/replay-tape.ts';
import { recordedRun } from '../runtime/run-record.ts';
import type { RunStore, StoredRun } from '../stores/run-store.ts';
import type { Tool } from '../tools/define-tool.ts';
import { toolResultFromJSON } from '../tools/tool-result.ts';

/** What a stored run is replayed with (`replayRuns`, `npm run eval -- --against`). */
export interface ReplayOptions {
  /** The tools live calls run with (a call still identical to the record is answered from it). */
  tools: Tool[];
  /**
   * Another planner. Without it, the record's planner turns are replayed while the run's inputs
   * match; a turn that differs (a policy changed what the planner would see) fails the replay with
   * a ReplayDivergedError, for there is no planner to ask.
   */
  planner?: Planner;
  /** The new policy set. Default: none. */
  policies?: Policy[];
  /** What compareRuns is given (pricing, duration tolerance). */
  compare?: CompareOptions;
}

/** Thrown (the replayed run fails with it) when a replay without a planner meets a turn the record does not have. */
export class ReplayDivergedError extends Error {
  override readonly name = 'ReplayDivergedError';
}

/** One stored run replayed: the replay's id and how it compares with the original. */
export interface ReplayedRun {
  runId: string;
  replayId: string;
  comparison: RunComparison;
  /** Planner turns and calls answered from the record, and calls that executed. */
  replayed: { turns: number; calls: number };
  executed: number;
}

/** What `replayRuns` returns: each run replayed, and a line a person reads. */
export interface ReplayReport {
  runs: ReplayedRun[];
  same: number;
  changed: number;
  summary: string;
}

/**
 * Replays stored runs with a new planner or policy set and reports what changed (issue 38 item 4:
 * the replay-based regression check). Each finished run of `store` (or those of `runIds`) starts
 * again in a runtime of its own, from the messages its first planner turn was sent, with the
 * stored run's caps; calls identical to the record (same tool, canonical input, turn and index)
 * get the recorded result instead of executing, and planner turns the record has are replayed
 * while nothing diverged (runtime/replay-tape.ts). Each replay is compared with its original
 * (`compareRuns`, with both event logs).
 *
 * @throws Error when a run of `runIds` is not in the store.
 */
export async function replayRuns(
  store: RunStore,
  options: ReplayOptions & { runIds?: string[] },
): Promise<ReplayReport> {
  const ids =
    options.runIds ??
    (await store.list())
      .filter((run) => run.status === 'completed' || run.status === 'failed')
      .map((r) => r.runId);
  const runs: ReplayedRun[] = [];
  for (const runId of ids) runs.push(await replayStoredRun(store, runId, options));
  const changed = runs.filter((run) => !run.comparison.same);
  const lines = [
    `${runs.length} runs replayed: ${runs.length - changed.length} the same, ${changed.length} changed.`,
  ];
  for (const run of changed) lines.push(`- ${run.comparison.summary}`);
  return { runs, same: runs.length - changed.length, changed: changed.length, summary: lines.join('\n') };
}

/** One stored run replayed (see {@link replayRuns}). */
export async function replayStoredRun(
  store: RunStore,
  runId: string,
  options: ReplayOptions,
): Promise<ReplayedRun> {
  const original = await recordedRun(
    {
      load: (id) => store.load(id),
      events: (id) => eventsOf(store, id),
    },
    runId,
  );
  const stored = original.run as StoredRun;
  const context = (unpackSnapshot(stored.snapshot) as { context: RunContext }).context;
  const events = original.events as RunEvent[];
  const tape = new ReplayTape(runId, events, context.messages);
  const replay = new RecordedReplay(tape, options.planner === undefined);
  const first = events.find((e): e is PlannerTurnEvent => e.type === 'planner_turn');
  const messages = context.messages.slice(0, first?.messages ?? 1);
  const replayId = `${runId}~replay`;
  const runtime = createRuntime({
    agent: { id: stored.agentId },
    planner: options.planner ?? diverged(),
    tools: options.tools,
    policies: options.policies ?? [],
    plugins: [replayPlugin(replay)],
    caps: context.ceilings as Partial<Caps>,
    telemetry: false,
  });
  let executed = 0;
  const subscription = { stop: () => {} };
  try {
    const run = runtime.start({
      runId: replayId,
      messages,
      sessionId: context.sessionId,
      labels: context.labels,
    });
    const sub = run.events$.subscribe((event) => {
      if (
        event.type === 'tool_result' &&
        event.result.executed &&
        event.result.telemetry?.replayedFrom === undefined
      )
        executed++;
    });
    subscription.stop = () => sub.unsubscribe();
    await run.result();
    const replayed = await recordedRun(runtime, replayId);
    return {
      runId,
      replayId,
      comparison: compareRuns(original, replayed, options.compare),
      replayed: { turns: replay.replayedTurns, calls: replay.replayedCalls },
      executed,
    };
  } finally {
    subscription.stop();
    await runtime.close();
  }
}

async function* eventsOf(store: RunStore, runId: string) {
  for (let after = 0; ; ) {
    const page = await store.readEvents(runId, { afterSeq: after, limit: 1000 });
    for (const record of page) yield record as never;
    if (page.length < 1000) return;
    after = page.at(-1)!.seq;
  }
}

/** The planner of a replay given none: every turn it is asked is one the record could not answer. */
function diverged(): Planner {
  const fail = async (input: { turnId: string }): Promise<PlanResult> => {
    throw new ReplayDivergedError(
      `Turn ${input.turnId}: the run diverged from its record and no planner was given to ask (ReplayOptions.planner, --config)`,
    );
  };
  return { planStart: fail, planResume: fail };
}

/**
 * The recorded replay as a plugin: `wrapPlan` answers a turn from the record while it matches,
 * `wrapToolCall` a call (matched on the input the planner gave it, as a fork does).
 */
function replayPlugin(replay: RecordedReplay): Plugin {
  /** The planner's calls of each turn, by turn id: the inputs as given, before the boundary. */
  const given = new Map<string, unknown[]>();
  return definePlugin({
    name: 'toolwarden.replay',
    async wrapPlan(plan, next) {
      const turn = positionOf(plan.input.turnId)?.turn ?? -1;
      const context = { turn, messages: plan.input.messages, runId: plan.run.runId } as RunContext;
      const recorded = replay.plan(
        context,
        plan.kind,
        plan.input.tools.map((tool) => tool.name),
      );
      const result = recorded?.result ?? (await next(plan));
      given.set(
        plan.input.turnId,
        (result.toolCalls ?? []).map((call) => call.input),
      );
      return result;
    },
    async wrapToolCall(call, next) {
      const { meta } = call;
      const at = positionOf(meta.toolCallId);
      const input = given.get(meta.turnId)?.[at?.index ?? -1] ?? call.input;
      const decision = replay.call(at?.turn ?? -1, at?.index ?? -1, call.tool.id, input);
      if (decision.kind === 'live') return next(call);
      const output = replayedOutput(decision, { toolCallId: meta.toolCallId }, meta, at!.index);
      return toolResultFromJSON(output.result);
    },
  });
}
