import { prepareToolCall } from '../../tools/index.ts';
import type { BfclEntry } from '../bfcl-types.ts';
import { type EntryTool, entryTools, groundTruthToolCalls } from '../entry-tools.ts';
import { quirksFor } from '../ground-truth-quirks.ts';

/**
 * Does the tool boundary accept every ground-truth call as it is, with no hint? Each call of the
 * entries goes through `prepareToolCall` against its entry's tools (the correct call a model
 * would send, `groundTruthToolCall` with optional arguments included). A rejected call is
 * explained when `GROUND_TRUTH_QUIRKS` lists it (a quirk of the data: the call breaks its own
 * doc); any other rejection is a bug in the mapping or the boundary.
 */
export interface GroundTruthAcceptance {
  calls: number;
  accepted: number;
  /** Rejected calls that are listed data quirks. */
  quirks: { call: string; kind: string; why: string }[];
  /** Rejected calls no quirk explains (must be empty). */
  unexplained: { call: string; message: string }[];
}

export function groundTruthAcceptance(
  entries: readonly BfclEntry[],
  cache?: Map<string, EntryTool>,
): GroundTruthAcceptance {
  const known = new Map(quirksFor('include', 'source-text').map((quirk) => [quirk.call, quirk]));
  const out: GroundTruthAcceptance = { calls: 0, accepted: 0, quirks: [], unexplained: [] };
  for (const entry of entries) {
    const tools = entryTools(entry, { cache });
    for (const gt of groundTruthToolCalls(entry, tools)) {
      out.calls++;
      const prepared = prepareToolCall(tools.catalog, { ...gt.call, toolCallId: gt.key });
      if (prepared.ok) {
        out.accepted++;
        continue;
      }
      const quirk = known.get(gt.key);
      if (quirk) out.quirks.push({ call: gt.key, kind: quirk.kind, why: quirk.why });
      else out.unexplained.push({ call: gt.key, message: prepared.result.error?.message ?? 'rejected' });
    }
  }
  return out;
}
