import { BFCL_TOOLSET, toolIdForName } from './bfcl-tool-id.ts';
import type { BfclFunctionDoc, GroundTruthCall, MultiTurnCall } from './bfcl-types.ts';
import type { MappedFunctionDoc } from './map-function-doc.ts';
import { toSourceText } from './source-text.ts';

/**
 * Turns ground truth into the one concrete call a correct model would make: the tool id and the
 * input object a planner would send through the boundary.
 *
 * A single-turn ground-truth call lists acceptable values per argument; the first one is taken.
 * An empty string `""` among them means the argument may be left out: `optional: 'include'`
 * (default) sends the first other value when there is one, `'omit'` leaves such arguments out.
 * Dict values list their own fields' acceptable values the same way (upstream `dict_checker`),
 * also inside lists (`list_dict_checker`); a dict whose fields are not lists (one Java entry)
 * is taken as written.
 *
 * In the `source-text` form (Java/JavaScript), each top-level value is then written as source
 * text ({@link toSourceText}).
 */
export type OptionalArguments = 'include' | 'omit';

export interface ToolCallInput {
  /** The tool id. */
  name: string;
  input: Record<string, unknown>;
}

export function groundTruthToolCall(
  call: GroundTruthCall,
  doc: BfclFunctionDoc,
  mapping: MappedFunctionDoc,
  options: { optional?: OptionalArguments } = {},
): ToolCallInput {
  const input = pickFields(call.args, options.optional ?? 'include');
  if (mapping.argumentForm === 'source-text' && mapping.language !== 'python') {
    const properties = doc.parameters?.properties ?? {};
    for (const [key, value] of Object.entries(input)) {
      input[key] = toSourceText(value, properties[key] ?? {}, mapping.language);
    }
  }
  return { name: mapping.toolId, input };
}

/** A multi-turn call (already concrete) as a tool call. */
export function multiTurnToolCall(call: MultiTurnCall, toolset: string = BFCL_TOOLSET): ToolCallInput {
  return { name: toolIdForName(call.name, toolset), input: structuredClone(call.args) };
}

function pickFields(fields: Record<string, unknown>, optional: OptionalArguments): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, acceptable] of Object.entries(fields)) {
    if (!Array.isArray(acceptable)) {
      define(out, key, pickValue(acceptable, optional));
      continue;
    }
    if (optional === 'omit' && acceptable.includes('')) continue;
    const first = acceptable.find((value) => value !== '');
    if (first !== undefined) define(out, key, pickValue(first, optional));
  }
  return out;
}

function pickValue(value: unknown, optional: OptionalArguments): unknown {
  if (Array.isArray(value)) return value.map((item) => pickValue(item, optional));
  if (value !== null && typeof value === 'object') {
    return pickFields(value as Record<string, unknown>, optional);
  }
  return value;
}

/** Plain assignment would turn a `__proto__` key into a prototype change. */
function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
