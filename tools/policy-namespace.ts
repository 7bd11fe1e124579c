/**
 * The `policy` namespace of docs/tool-boundary.md §Vocabulary: `policy.RetryHint` is the runtime's form of a hint, with
 * provenance, given to policies and UIs.
 */
export type { PolicyRetryHint as RetryHint } from './retry-hint.ts';
export { PolicyRetryHintSchema as RetryHintSchema, toPolicyRetryHint } from './retry-hint.ts';
