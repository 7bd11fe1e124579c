/**
 * What `runtime.start` gives a new run's actor: its caps clamped to the runtime's, and what the
 * policies decide at run start (labels, caps, disabled tools).
 *
 * @module
 */

import type { RunInput } from '../machines/run-context.ts';
import type { RunInfo } from '../plugins/define-plugin.ts';
import type { PolicyRunner } from '../policies/policy-runner.ts';
import { type Caps, CapsSchema } from '../run/caps.ts';
import type { PolicyDecisionRecord } from '../run/run-events.ts';
import type { StartOptions } from './runtime-options.ts';

/** A new run's actor input and the start policies' decisions. */
export interface StartInput {
  input: RunInput;
  decisions: PolicyDecisionRecord[] | undefined;
}

/**
 * The input of run `runId`, which `runtime.start(start)` starts. `notifyRunStart` gets the run's
 * info after the policies and before the input is read from it: a plugin may set its `traceContext`.
 *
 * @throws ZodError for invalid caps; PolicyError when a policy refuses the run (fail closed).
 */
export function startInputOf(
  runId: string,
  start: StartOptions,
  runtime: { agent: RunInfo['agent']; ceilings: Caps; policies: PolicyRunner },
  notifyRunStart: (info: RunInfo) => void,
): StartInput {
  const { agent, ceilings } = runtime;
  const caps = runCaps(ceilings, start.caps);
  const startedAt = Date.now();
  const appDisabled = Object.fromEntries((start.disabledTools ?? []).map((id) => [id, 'app']));
  // Policies first: their disabled tools are never advertised. Throws PolicyError (fail closed).
  const initial = runtime.policies.onRunStart?.({
    runId,
    agent,
    sessionId: start.sessionId,
    labels: start.labels ?? {},
    caps,
    disabledTools: appDisabled,
    startedAt,
  });
  const info: RunInfo = {
    runId,
    agent,
    sessionId: start.sessionId,
    labels: initial?.labels ?? start.labels ?? {},
    traceContext: null,
  };
  notifyRunStart(info);
  const input: RunInput = {
    runId,
    agent,
    sessionId: start.sessionId,
    labels: info.labels,
    messages: start.messages,
    caps: initial?.caps ?? caps,
    startedAt,
    disabledTools: initial?.disabledTools ?? appDisabled,
    traceContext: info.traceContext,
  };
  return { input, decisions: initial?.decisions };
}

/** A run's caps: what it asks for, never above the runtime's `ceilings`. */
function runCaps(ceilings: Caps, requested: Partial<Caps> | undefined): Caps {
  // The ceilings are parsed caps already (resolveRuntimeOptions): nothing asked, nothing to check.
  if (requested === undefined) return { ...ceilings };
  const caps = CapsSchema.parse({ ...ceilings, ...requested });
  for (const key of Object.keys(caps) as (keyof Caps)[]) {
    const limit = Math.min(caps[key] ?? Number.POSITIVE_INFINITY, ceilings[key] ?? Number.POSITIVE_INFINITY);
    if (Number.isFinite(limit)) caps[key] = limit;
  }
  if (ceilings.maxTotalTokens !== undefined)
    caps.maxTotalTokens = Math.min(caps.maxTotalTokens ?? Number.POSITIVE_INFINITY, ceilings.maxTotalTokens);
  return caps;
}
