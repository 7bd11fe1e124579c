/**
 * BFCL v4 as real input for toolwarden: load categories, map function docs to tools, turn
 * ground truth into calls, make the wrong calls LLMs make, and find (or fetch) the data.
 */
export * from './bfcl-tool-id.ts';
export type * from './bfcl-types.ts';
export * from './data-dir.ts';
export * from './entry-tools.ts';
export * from './ground-truth-call.ts';
export * from './ground-truth-quirks.ts';
export * from './load-entries.ts';
export * from './load-jsonl.ts';
export * from './map-function-doc.ts';
export * from './mapping-report.ts';
export * from './mistake-model.ts';
export * from './parse-python-call.ts';
export * from './source-text.ts';
export * from './with-fault-once.ts';
