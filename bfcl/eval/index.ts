/**
 * `toolwarden eval bfcl`: BFCL entries as runs through the runtime, with injected mistakes
 * repaired from RetryHints by the hint-guided planner and the built-in policies.
 */
export * from './answer-clarification.ts';
export * from './echo-tool.ts';
export * from './eval-case.ts';
export * from './eval-summary.ts';
export * from './format-table.ts';
export * from './ground-truth-acceptance.ts';
export * from './match-ground-truth.ts';
export * from './run-case.ts';
export * from './run-eval.ts';
