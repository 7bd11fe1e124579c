import { noProgress } from './builtins/no-progress.ts';
import { repeatedInvalidCall } from './builtins/repeated-invalid-call.ts';
import type { Policy } from './define-policy.ts';

/**
 * The policies a runtime runs when `createRuntime` is given no `policies` (docs/policies.md
 * §Defaults): `repeatedInvalidCall({ after: 2 })` (the same refused call again) and `noProgress()`
 * (the same call with the same result: hint after 3, refuse after 5, finalize at 7). Give `policies: []` for none, or compose:
 * `policies: [...defaultPolicies(), myPolicy]`.
 */
export function defaultPolicies(): Policy[] {
  return [repeatedInvalidCall({ after: 2 }), noProgress()];
}
