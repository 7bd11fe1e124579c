import { repeatedInvalidCall } from './builtins/repeated-invalid-call.ts';
import type { Policy } from './define-policy.ts';

/**
 * The policies a runtime runs when `createRuntime` is given no `policies` (docs/policies.md
 * §Defaults): `repeatedInvalidCall({ after: 2 })`. Give `policies: []` for none, or compose:
 * `policies: [...defaultPolicies(), myPolicy]`.
 */
export function defaultPolicies(): Policy[] {
  return [repeatedInvalidCall({ after: 2 })];
}
