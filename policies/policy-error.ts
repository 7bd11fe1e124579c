import type { PolicyHookName } from './define-policy.ts';

/**
 * A policy broke its contract: it threw, exceeded its time limit, returned a decision that is not
 * a {@link PolicyDecision}, or decided `fail`. Fails the run closed unless the policy is
 * `failOpen` (docs/policies.md); the run's error then names the policy. Thrown by `runtime.start` when
 * this happens in `onRunStart`.
 */
export class PolicyError extends Error {
  override readonly name = 'PolicyError';
  constructor(
    /** The policy's name. */
    readonly policy: string,
    readonly hook: PolicyHookName,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** The error for something a policy's hook threw (or rejected with). */
  static thrown(policy: string, hook: PolicyHookName, err: unknown): PolicyError {
    if (err instanceof PolicyError) return err;
    const detail = err instanceof Error ? err.message : String(err);
    return new PolicyError(policy, hook, `Policy "${policy}" threw in ${hook}: ${detail}`, { cause: err });
  }
}

/** A hook did not settle within its time limit. */
export class PolicyTimeoutError extends PolicyError {
  constructor(
    policy: string,
    hook: PolicyHookName,
    readonly timeoutMs: number,
  ) {
    super(policy, hook, `Policy "${policy}" timed out after ${timeoutMs} ms in ${hook}`);
  }
}
