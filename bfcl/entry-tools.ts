import { type JsonSchemaToolOptions, type Tool, ToolCatalog } from '../tools/index.ts';
import type { BfclEntry, BfclFunctionDoc } from './bfcl-types.ts';
import {
  groundTruthToolCall,
  multiTurnToolCall,
  type OptionalArguments,
  type ToolCallInput,
} from './ground-truth-call.ts';
import {
  type ArgumentForm,
  type MappedFunctionDoc,
  mapFunctionDoc,
  toolFromFunctionDoc,
} from './map-function-doc.ts';

/**
 * The tools of one BFCL entry and its ground truth as tool calls: what a run over the entry
 * needs, in one place.
 *
 * Ground-truth calls are keyed `<entry id>#<call index>` (single-turn) and
 * `<entry id>@<turn>.<call index>` (multi-turn), the keys `GROUND_TRUTH_QUIRKS` uses.
 */
export interface EntryTool {
  doc: BfclFunctionDoc;
  mapping: MappedFunctionDoc;
  tool: Tool;
}

export interface EntryTools {
  /** Every doc of the entry, held-out ones included, in the entry's order. */
  tools: EntryTool[];
  catalog: ToolCatalog;
  /** By BFCL name. */
  byName: Map<string, EntryTool>;
}

export interface EntryToolsOptions extends Omit<JsonSchemaToolOptions, 'toolset'> {
  argumentForm?: ArgumentForm;
  languageHint?: boolean;
  /**
   * Reuses tools across entries (tools are immutable; the multi-turn entries share their docs).
   * Keyed by the doc and the mapping options; pass the same map only with the same tool options.
   */
  cache?: Map<string, EntryTool>;
}

/** @throws BfclMappingError or ToolDefinitionError for a doc that cannot become a tool. */
export function entryTools(entry: BfclEntry, options: EntryToolsOptions = {}): EntryTools {
  const { cache, ...toolOptions } = options;
  const docs = [...entry.functions, ...entry.heldOutFunctions.flatMap((held) => held.functions)];
  const tools = docs.map((doc): EntryTool => {
    const key = `${entry.language}|${options.argumentForm ?? ''}|${options.languageHint ?? ''}|${JSON.stringify(doc)}`;
    const cached = cache?.get(key);
    if (cached) return cached;
    const built = { doc, ...toolFromFunctionDoc(doc, { ...toolOptions, language: entry.language }) };
    cache?.set(key, built);
    return built;
  });
  return {
    tools,
    catalog: new ToolCatalog(tools.map((t) => t.tool)),
    byName: new Map(tools.map((t) => [t.mapping.name, t])),
  };
}

export interface GroundTruthToolCall {
  /** `<entry id>#<index>` or `<entry id>@<turn>.<index>`. */
  key: string;
  /** The turn (0 for single-turn entries). */
  turn: number;
  call: ToolCallInput;
  /** The tool the call is for; undefined when the ground truth names a function the entry lacks. */
  tool?: Tool;
}

/** Every ground-truth call of the entry as a tool call, in order. Answers-only entries have none. */
export function groundTruthToolCalls(
  entry: BfclEntry,
  tools: EntryTools,
  options: { optional?: OptionalArguments } = {},
): GroundTruthToolCall[] {
  const truth = entry.groundTruth;
  if (truth?.kind === 'calls') {
    return truth.calls.map((gt, index) => {
      const found = tools.byName.get(gt.name);
      // A name the entry lacks (loadCategory reports it) still gets its id and chosen values.
      const doc = found?.doc ?? { name: gt.name };
      const call = groundTruthToolCall(gt, doc, found?.mapping ?? mapFunctionDoc(doc), options);
      return { key: `${entry.id}#${index}`, turn: 0, call, tool: found?.tool };
    });
  }
  if (truth?.kind === 'turns') {
    return truth.turns.flatMap((calls, turn) =>
      calls.map((gt, index) => ({
        key: `${entry.id}@${turn}.${index}`,
        turn,
        call: multiTurnToolCall(gt),
        tool: tools.byName.get(gt.name)?.tool,
      })),
    );
  }
  return [];
}
