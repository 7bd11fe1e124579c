/**
 * The policy engine and built-in policies (docs/policies.md). `policies/testing.ts` (the harness for
 * policy authors) is exported from here too.
 */

export * from '../run/policy-effects.ts';
export * from './builtins/ask-on-missing-fields.ts';
export * from './builtins/circuit-breaker.ts';
export * from './builtins/no-progress.ts';
export * from './builtins/rate-limit-backoff.ts';
export * from './builtins/repeated-invalid-call.ts';
export * from './builtins/restrict-on-invalid-arguments.ts';
export * from './builtins/time-budget.ts';
export * from './builtins/tool-allowlist.ts';
export * from './call-fingerprint.ts';
export * from './clarification-from-hint.ts';
export * from './default-policies.ts';
export * from './define-policy.ts';
export type {
  ConsultationRun,
  DecisionSubject,
  PolicyRunContext,
  ToolDirectory,
  ToolInfo,
} from './policy-consultation.ts';
export * from './policy-engine.ts';
export * from './policy-error.ts';
export type { JsonValue } from './policy-json.ts';
export * from './policy-runner.ts';
export * from './policy-state.ts';
export * from './testing.ts';
export * from './tool-selector.ts';
