/**
 * The idempotency key of a tool call (issue 34 item 2, docs/durability.md §Effects): what a tool
 * hands the system it changes (a payment API's `Idempotency-Key`, a unique column) so that the
 * same call, run again, has its effect once.
 *
 * `tw_` + 32 base64url characters (192 bits) of SHA-256 over the run id, the call id and the
 * call's validated input in a canonical JSON form (object keys sorted). So it is:
 *
 * | the call is …                                                    | key          |
 * |------------------------------------------------------------------|--------------|
 * | run again after a crash, a takeover, an eviction, an activity retry | the same  |
 * | run again by choice (`resolveInDoubt(…, { status: 'not_done' })`) | the same     |
 * | approved with an edited input                                     | a new one    |
 * | another call (another turn, another run)                          | a new one    |
 *
 * The input digested is the validated input the run recorded (`PendingCall.preparedInput`),
 * without injected fields: a plugin fills those from ToolCallMeta and labels after the key is set.
 *
 * @module
 */

import { createHash } from 'node:crypto';

/** The idempotency key of call `toolCallId` of run `runId` with validated input `input` (a JSON value). */
export function idempotencyKey(runId: string, toolCallId: string, input: unknown): string {
  const hash = createHash('sha256');
  hash.update(JSON.stringify([runId, toolCallId]));
  hash.update('\n');
  hash.update(canonicalJson(input));
  return `tw_${hash.digest('base64url').slice(0, 32)}`;
}

/** JSON with object keys sorted at every depth; `undefined` members left out, as JSON does. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const record = value as Record<string, unknown>;
  const members = Object.keys(record)
    .sort()
    .filter((key) => record[key] !== undefined)
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`);
  return `{${members.join(',')}}`;
}
