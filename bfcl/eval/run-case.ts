import {
  askOnMissingFields,
  circuitBreaker,
  type Policy,
  rateLimitBackoff,
  restrictOnInvalidArguments,
  timeBudget,
} from '../../policies/index.ts';
import type { Caps } from '../../run/caps.ts';
import type { RunEvent } from '../../run/run-events.ts';
import { createRuntime } from '../../runtime/create-runtime.ts';
import { hintRepairPlanner } from '../../runtime/planners/hint-repair-planner.ts';
import { matchesTrajectory } from '../../testing/match-trajectory.ts';
import type { RetryHint, RetryReason } from '../../tools/index.ts';
import { answerClarification } from './answer-clarification.ts';
import { echoOf } from './echo-tool.ts';
import type { CaseKind, EvalCase } from './eval-case.ts';
import { mismatch as callMismatch, callsMismatch, type ExecutedCall } from './match-ground-truth.ts';

/**
 * Runs one eval case through the runtime, as an app would: `createRuntime` with the case's tools,
 * the hint-guided repair planner and the built-in policies; `start`; answer each
 * `await_clarification` from the ground truth (`answerClarification`); read `result()`.
 *
 * | piece            | in the eval                                                          |
 * |------------------|----------------------------------------------------------------------|
 * | planner          | `hintRepairPlanner`: the case's first calls (or question), then repairs from hints; asks for missing fields |
 * | policies         | `askOnMissingFields` (asks first), `restrictOnInvalidArguments`, `rateLimitBackoff` (short waits), `circuitBreaker`, `timeBudget` |
 * | caps             | {@link EvalSettings.caps}: every run ends by them at the latest      |
 * | watchdog         | a run still going `timeBudgetMs + finalizeGraceMs + 2 s` after its start is canceled (counted as failed) |
 *
 * Outcomes: `completed` (final answer, no cap), `capped` (finalized by a cap, the time budget or
 * a policy), `failed` (failed or canceled).
 */
export interface EvalSettings {
  caps: Caps;
  /** Time the finalizing turn gets past the time budget, ms. */
  finalizeGraceMs: number;
  toolTimeoutMs: number;
  faultTimeoutMs: number;
  retryAfterMs: number;
  /** First wait of `rateLimitBackoff` when the tool names none, ms. */
  backoffBaseMs: number;
  /** Telemetry through the global OpenTelemetry API (a no-op until an SDK is registered). */
  telemetry: boolean;
}

export const DEFAULT_EVAL_SETTINGS: EvalSettings = {
  caps: { maxToolCalls: 24, maxConsecutiveFailedToolCalls: 4, maxRetriesPerTool: 3, timeBudgetMs: 15_000 },
  finalizeGraceMs: 2_000,
  toolTimeoutMs: 5_000,
  faultTimeoutMs: 100,
  retryAfterMs: 20,
  backoffBaseMs: 20,
  telemetry: false,
};

export type RunOutcomeKind = 'completed' | 'capped' | 'failed';

/** One run of the eval, as the JSON report holds it. */
export interface EvalRecord {
  id: string;
  category: string;
  kind: CaseKind;
  detail: string;
  mistakeKey?: string;
  /** Quirks of the data in the entry's ground truth (`GROUND_TRUTH_QUIRKS`), as `call: kind`. */
  quirks: string[];
  outcome: RunOutcomeKind;
  status: 'completed' | 'failed' | 'canceled';
  /** The run's status in the runtime's store once `result()` resolved (never `running`/`awaiting`). */
  storedStatus: string;
  finalizeReason?: string;
  error?: string;
  expectedReason?: RetryReason;
  /** The reasons of the run's retry hints, in order. */
  hintReasons: RetryReason[];
  /** Whether the first hint named the expected reason; undefined when no hint was expected. */
  hintAccurate?: boolean;
  clarifications: number;
  toolCalls: number;
  failedCalls: number;
  /** A call failed once and its repair succeeded; undefined when no call failed. */
  repairedOnFirstRetry?: boolean;
  /** The calls that ran match the ground truth (`callsMismatch`). */
  correct: boolean;
  mismatch?: string;
  /**
   * The case's trajectory (`matchesTrajectory`, mode `superset`): every ground-truth call was
   * proposed with an acceptable input, whatever repairs came between; else the first that was not.
   */
  trajectory: { pass: boolean; firstMismatch?: string };
  durationMs: number;
  executed: ExecutedCall[];
  policyDecisions: string[];
  notes: string[];
}

export function evalPolicies(settings: EvalSettings): Policy[] {
  return [
    askOnMissingFields({ maxAsks: 2 }),
    restrictOnInvalidArguments({ maxRetries: 2 }),
    rateLimitBackoff({ baseMs: settings.backoffBaseMs, maxMs: 1_000, maxWaits: 3 }),
    circuitBreaker({ failures: 3, cooldownMs: 1_000 }),
    timeBudget({ maxMs: settings.caps.timeBudgetMs }),
  ];
}

export async function runCase(
  evalCase: EvalCase,
  settings: EvalSettings = DEFAULT_EVAL_SETTINGS,
): Promise<EvalRecord> {
  const runtime = createRuntime({
    agent: { id: 'bfcl-eval', name: 'BFCL eval' },
    planner: hintRepairPlanner({
      firstCalls: () => evalCase.firstCalls,
      firstQuestion: evalCase.firstQuestion ? () => evalCase.firstQuestion : undefined,
      ask: true,
    }),
    tools: evalCase.tools,
    policies: evalPolicies(settings),
    caps: settings.caps,
    finalizeGraceMs: settings.finalizeGraceMs,
    telemetry: settings.telemetry ? undefined : false,
  });
  const started = performance.now();
  const run = runtime.start({
    runId: evalCase.id,
    messages: evalCase.messages,
    labels: { category: evalCase.category, entry: evalCase.id, mistake: evalCase.kind },
  });
  const hints: RetryHint[] = [];
  const hintsByCall = new Map<string, RetryHint>();
  const notes: string[] = [];
  const policyDecisions: string[] = [];
  const executedSoFar: ExecutedCall[] = [];
  let clarifications = 0;
  const onEvent = (event: RunEvent) => {
    if (event.type === 'retry_hint') {
      hints.push(event.hint);
      hintsByCall.set(event.hint.toolCallId, event.hint);
    } else if (event.type === 'tool_result') {
      const echo = event.result.executed && !event.result.error ? echoOf(event.result.result) : undefined;
      if (echo) executedSoFar.push({ tool: echo.tool, input: echo.arguments });
    } else if (event.type === 'planner_note') notes.push(event.note);
    else if (event.type === 'policy_decision') {
      policyDecisions.push(
        `${event.decision.policy}: ${event.decision.note ?? event.decision.kinds.join(', ')}`,
      );
    } else if (event.type === 'await_clarification') {
      clarifications++;
      const answer = answerClarification(evalCase, event.clarification, {
        hintsByCall,
        executed: executedSoFar,
      });
      // Answered after the event's dispatch, as a person would, never inside the actor's step.
      setImmediate(() => {
        run.provideClarification({ id: event.clarification.id, answer }).catch((err: unknown) => {
          notes.push(`eval: the answer was refused: ${(err as Error).message}`);
        });
      });
    }
  };
  const subscription = run.events$.subscribe(onEvent);
  const watchdog = setTimeout(
    () => run.cancel('eval: the run outlived its time budget'),
    settings.caps.timeBudgetMs + settings.finalizeGraceMs + 2_000,
  );
  const outcome = await run.result();
  const durationMs = performance.now() - started;
  clearTimeout(watchdog);
  subscription.unsubscribe();
  // What the store says at the end: a run left `running` or `awaiting` would be a leak.
  await runtime.flush();
  const storedStatus = (await runtime.list())[0]?.status ?? 'missing';
  await runtime.close();

  const executed = outcome.toolResults.flatMap((result): ExecutedCall[] => {
    const echo = result.executed && !result.error ? echoOf(result.result) : undefined;
    return echo ? [{ tool: echo.tool, input: echo.arguments }] : [];
  });
  const failedCalls = outcome.toolResults.filter((result) => result.error).length;
  const kind: RunOutcomeKind =
    outcome.status !== 'completed' ? 'failed' : outcome.finalizeReason ? 'capped' : 'completed';
  const mismatch = callsMismatch(executed, evalCase.expected);
  const trajectory = caseTrajectory(outcome, evalCase);
  const record: EvalRecord = {
    id: evalCase.id,
    category: evalCase.category,
    kind: evalCase.kind,
    detail: evalCase.detail,
    mistakeKey: evalCase.mistakeKey,
    quirks: evalCase.quirks.map((quirk) => `${quirk.call}: ${quirk.kind}`),
    outcome: kind,
    status: outcome.status,
    storedStatus,
    finalizeReason: outcome.finalizeReason,
    error: outcome.error?.message,
    expectedReason: evalCase.expectedReason,
    hintReasons: hints.map((hint) => hint.reason),
    clarifications,
    toolCalls: outcome.toolResults.length,
    failedCalls,
    correct: mismatch === undefined,
    mismatch,
    trajectory,
    durationMs: Math.round(durationMs * 10) / 10,
    executed,
    policyDecisions,
    notes,
  };
  if (evalCase.expectedReason !== undefined)
    record.hintAccurate = hints[0]?.reason === evalCase.expectedReason;
  if (failedCalls > 0) {
    record.repairedOnFirstRetry =
      failedCalls === 1 && kind === 'completed' && executed.length === evalCase.expected.length;
  }
  return record;
}

/** The case's ground truth as an expected trajectory, each input matched as BFCL's checker would (`mismatch`). */
function caseTrajectory(
  outcome: Parameters<typeof matchesTrajectory>[0],
  evalCase: EvalCase,
): EvalRecord['trajectory'] {
  const expected = evalCase.expected.map((want) => ({
    name: want.tool,
    input: (input: unknown) =>
      input !== null &&
      typeof input === 'object' &&
      callMismatch({ tool: want.tool, input: input as Record<string, unknown> }, want) === undefined,
  }));
  const match = matchesTrajectory(outcome, expected, { mode: 'superset' });
  if (match.pass) return { pass: true };
  const miss = match.firstMismatch!;
  return { pass: false, firstMismatch: `${miss.expected?.name ?? miss.actual?.name}: ${miss.reason}` };
}
