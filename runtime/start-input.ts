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
import { idProblem, MAX_RUN_ID_BYTES } from '../stores/run-store-input.ts';
import type { StartOptions } from './runtime-options.ts';

/**
 * `runtime.start(options)` was given options no run can be started with (issue 36 item 4): a
 * label that is not a string or is named `__proto__`/`constructor`, labels that are not a plain
 * object, an empty run id, a run or session id with NUL or a lone surrogate or over the store's
 * limit (`RunStore.maxRunIdBytes`, default 512 UTF-8 bytes). Thrown by `start()` itself, before
 * anything runs or is written: such a run would otherwise be refused by every write of its store.
 */
export class StartOptionsError extends TypeError {
  override readonly name = 'StartOptionsError';
  /** The option at fault: `runId`, `sessionId`, `labels`, `labels.tenant`. */
  readonly option: string;

  constructor(option: string, problem: string) {
    super(`runtime.start(): ${option} ${problem}`);
    this.option = option;
  }
}

/** Label names refused: `__proto__` sets an object's prototype when labels are rebuilt, `constructor` shadows it. */
const FORBIDDEN_LABELS = new Set(['__proto__', 'constructor']);

/**
 * Checks what `start` gives a run that its store keeps (ids, labels).
 *
 * @throws StartOptionsError naming the option and what is wrong with it.
 */
export function checkStartOptions(
  start: Pick<StartOptions, 'runId' | 'sessionId' | 'labels'>,
  maxRunIdBytes: number = MAX_RUN_ID_BYTES,
): void {
  if (start.runId !== undefined) {
    const problem = idProblem(start.runId, maxRunIdBytes);
    if (problem !== undefined) throw new StartOptionsError('runId', problem);
  }
  if (start.sessionId !== undefined) {
    const problem = idProblem(start.sessionId, maxRunIdBytes);
    if (problem !== undefined) throw new StartOptionsError('sessionId', problem);
  }
  if (start.labels !== undefined) checkLabels(start.labels, 'labels');
}

/** Labels a store can keep and policies can read: a plain object of strings, no prototype keys. */
function checkLabels(labels: unknown, option: string): void {
  if (typeof labels !== 'object' || labels === null || Array.isArray(labels)) {
    throw new StartOptionsError(option, `must be an object of strings, got ${describe(labels)}`);
  }
  const prototype = Object.getPrototypeOf(labels);
  if (prototype !== Object.prototype && prototype !== null) {
    // `{ __proto__: { tenant: 'x' } }` reads as a label the store never sees.
    throw new StartOptionsError(option, 'must be a plain object (its prototype is not Object.prototype)');
  }
  for (const key of Reflect.ownKeys(labels)) {
    if (typeof key === 'symbol')
      throw new StartOptionsError(option, `must have string keys, got ${String(key)}`);
    if (FORBIDDEN_LABELS.has(key))
      throw new StartOptionsError(`${option}.${key}`, 'is not allowed as a label name');
    const value = (labels as Record<string, unknown>)[key];
    if (typeof value !== 'string') {
      throw new StartOptionsError(`${option}.${key}`, `must be a string, got ${describe(value)}`);
    }
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'bigint') return `a bigint (${value}n)`;
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 100));
  return `${typeof value} ${String(value)}`;
}

/** A new run's actor input and the start policies' decisions. */
export interface StartInput {
  input: RunInput;
  decisions: PolicyDecisionRecord[] | undefined;
}

/**
 * The input of run `runId`, which `runtime.start(start)` starts. `notifyRunStart` gets the run's
 * info after the policies and before the input is read from it: a plugin may set its `traceContext`.
 *
 * @throws StartOptionsError for ids or labels no store can keep (`checkStartOptions`, against
 *   `runtime.maxRunIdBytes`); ZodError for invalid caps; PolicyError when a policy refuses the
 *   run (fail closed).
 */
export function startInputOf(
  runId: string,
  start: StartOptions,
  runtime: { agent: RunInfo['agent']; ceilings: Caps; policies: PolicyRunner; maxRunIdBytes?: number },
  notifyRunStart: (info: RunInfo) => void,
): StartInput {
  checkStartOptions({ ...start, runId }, runtime.maxRunIdBytes);
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
    ...(start.grants === undefined ? {} : { grants: checkedGrants(start.grants) }),
  };
  return { input, decisions: initial?.decisions };
}

/** `grants`: an array of non-empty strings of at most 256 characters, copied. @throws StartOptionsError */
function checkedGrants(grants: unknown): string[] {
  if (!Array.isArray(grants))
    throw new StartOptionsError('grants', `must be an array of strings, got ${describe(grants)}`);
  return grants.map((grant, index) => {
    if (typeof grant !== 'string' || grant.length === 0 || grant.length > 256) {
      throw new StartOptionsError(
        `grants.${index}`,
        `must be a non-empty string of at most 256 characters, got ${describe(grant)}`,
      );
    }
    return grant;
  });
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
