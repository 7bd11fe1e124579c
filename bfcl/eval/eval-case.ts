import type { Message } from '../../run/message.ts';
import type { PlannedToolCall } from '../../run/planner.ts';
import type { FirstQuestion } from '../../runtime/planners/hint-repair-planner.ts';
import type { RetryReason, Tool } from '../../tools/index.ts';
import type { BfclEntry, BfclMessage } from '../bfcl-types.ts';
import {
  type EntryTool,
  entryTools,
  type GroundTruthToolCall,
  groundTruthToolCalls,
} from '../entry-tools.ts';
import { type GroundTruthQuirk, quirksFor } from '../ground-truth-quirks.ts';
import { applyMistake, chooseMistake, EXPECTED_REASON, type MistakeKind } from '../mistake-model.ts';
import { seededRandom } from '../seeded-random.ts';
import { toSourceText } from '../source-text.ts';
import { withFaultOnce } from '../with-fault-once.ts';
import { echoTool } from './echo-tool.ts';
import type { ExpectedCall } from './match-ground-truth.ts';

/**
 * One BFCL entry made into a run for the eval: the model's calls (the ground truth with one
 * seeded mistake), the tools (the entry's function docs, executing as echoes, one of them with a
 * fault when the mistake is `timeout_once` / `rate_limited_once`), the transcript, and what a
 * correct run calls.
 *
 * | category kind            | the model's first turn                                        | kind |
 * |--------------------------|---------------------------------------------------------------|------|
 * | single-turn (`simple_python`, `live_multiple`, `parallel`, ...) | every ground-truth call, one of them (seeded) with a mistake of the mistake model | a {@link MistakeKind} |
 * | `multi_turn_miss_param`  | the calls of the turn after the one that lacks a parameter, without the parameter the later turn gives, when it is a required argument the boundary can see | `missing_param` |
 * | `multi_turn_miss_param`, the missing information is no required argument (an optional one, none, or one already named) | a question before any call; the calls follow the answer | `asks_first` |
 *
 * The transcript of a `multi_turn_miss_param` run is the user turns up to the one that lacks
 * the parameter; the later turn arrives as the answer to the run's clarification.
 */
export type CaseKind = MistakeKind | 'missing_param' | 'asks_first';

/** The RetryReason the first hint of a case must name; undefined: no hint is expected. */
export function expectedReasonOf(kind: CaseKind): RetryReason | undefined {
  if (kind === 'missing_param') return 'missing_fields';
  if (kind === 'asks_first') return undefined;
  return EXPECTED_REASON[kind];
}

export interface EvalCase {
  id: string;
  category: string;
  kind: CaseKind;
  expectedReason: RetryReason | undefined;
  /** What was changed, e.g. `removed required "unit"`. */
  detail: string;
  /** The ground-truth call the mistake is in. */
  mistakeKey?: string;
  messages: Message[];
  firstCalls: PlannedToolCall[];
  firstQuestion?: FirstQuestion & { expectedKey: string };
  tools: Tool[];
  expected: ExpectedCall[];
  /** `multi_turn_miss_param`: the later user turn that gives the missing parameter. */
  laterTurn?: string;
  /** Quirks of the data in this entry's ground-truth calls (a correct run may be impossible). */
  quirks: GroundTruthQuirk[];
}

export interface CaseOptions {
  seed: number | string;
  /** Mistake kinds to draw from. Default: all. */
  kinds?: readonly MistakeKind[];
  /** Tool timeout for echo tools, ms. */
  toolTimeoutMs: number;
  /** The first execution of a `timeout_once` tool waits this long, ms. */
  faultTimeoutMs: number;
  /** `retryAfterMs` of a `rate_limited_once` tool, ms. */
  retryAfterMs: number;
  /** Shared across cases: tools built once per function doc. */
  toolCache?: Map<string, EntryTool>;
}

/** @throws BfclMappingError, MistakeNotApplicableError (a ground truth naming no tool of the entry). */
export function caseFromEntry(entry: BfclEntry, options: CaseOptions): EvalCase {
  const tools = entryTools(entry, { cache: options.toolCache });
  const truth = groundTruthToolCalls(entry, tools);
  if (entry.category === 'multi_turn_miss_param') return missParamCase(entry, tools.tools, truth, options);

  const toolIds = tools.tools.map((t) => t.tool.id);
  const index = truth.length > 1 ? seededRandom(options.seed, entry.id, 'call').int(truth.length) : 0;
  const target = truth[index]!;
  const mistakeTarget = { key: target.key, call: target.call, tool: target.tool!, toolIds };
  const kind = chooseMistake(mistakeTarget, options.seed, { kinds: options.kinds });
  const mistake = applyMistake(mistakeTarget, kind, options.seed);
  const faulted = mistake.fault ? target.call.name : undefined;
  return {
    id: entry.id,
    category: entry.category,
    kind,
    expectedReason: mistake.expectedReason,
    detail: mistake.detail,
    mistakeKey: target.key,
    messages: transcript(entry.turns.flat()),
    firstCalls: truth.map((gt, i) =>
      i === index ? mistake.call : { name: gt.call.name, input: gt.call.input },
    ),
    tools: tools.tools.map(({ tool }) =>
      tool.id === faulted ? faultyEcho(tool, mistake.fault!, options) : echoTool(tool, options.toolTimeoutMs),
    ),
    expected: truth.map((gt, i) => expectedCall(entry, gt, i, tools.byName)),
    quirks: quirksOf(truth),
  };
}

function missParamCase(
  entry: BfclEntry,
  entryTools: EntryTool[],
  truth: GroundTruthToolCall[],
  options: CaseOptions,
): EvalCase {
  const turns = entry.groundTruth?.kind === 'turns' ? entry.groundTruth.turns : [];
  // The turn that lacks a parameter expects no call; the next one gives the parameter.
  const missTurn = turns.findIndex((calls, turn) => calls.length === 0 && (turns[turn + 1]?.length ?? 0) > 0);
  if (missTurn < 0) throw new Error(`${entry.id}: no turn without calls followed by one with calls`);
  const next = truth.filter((gt) => gt.turn === missTurn + 1);
  const said = entry.turns
    .slice(0, missTurn + 1)
    .flat()
    .map((m) => m.content.toLowerCase())
    .join('\n');
  const laterTurn = (entry.turns[missTurn + 1] ?? []).map((m) => m.content).join('\n');
  const byName = new Map(entryTools.map((t) => [t.tool.id, t.tool]));

  // The missing parameter: an argument of the next turn's calls whose value nobody said yet.
  const unsaid = next.flatMap((gt, index) =>
    Object.entries(gt.call.input)
      .filter(([, value]) => !said.includes(spoken(value)))
      .map(([field]) => ({ index, field, required: isRequired(byName.get(gt.call.name), field) })),
  );
  const missing = unsaid.find((u) => u.required) ?? unsaid[0];
  const calls = next.map((gt) => ({ name: gt.call.name, input: structuredClone(gt.call.input) }));
  if (missing) delete calls[missing.index]!.input[missing.field];
  const base = {
    id: entry.id,
    category: entry.category,
    messages: transcript(entry.turns.slice(0, missTurn + 1).flat()),
    tools: entryTools.map(({ tool }) => echoTool(tool, options.toolTimeoutMs)),
    expected: next.map((gt) => expectedCall(entry, gt)),
    laterTurn,
    quirks: quirksOf(next),
  };
  if (missing?.required) {
    return {
      ...base,
      kind: 'missing_param',
      expectedReason: 'missing_fields',
      detail: `turn ${missTurn} lacks "${missing.field}" of ${next[missing.index]!.call.name}; turn ${missTurn + 1} gives it`,
      mistakeKey: next[missing.index]!.key,
      firstCalls: calls,
    };
  }
  const asked = missing?.index ?? 0;
  const fields = missing ? [missing.field] : [];
  return {
    ...base,
    kind: 'asks_first',
    expectedReason: undefined,
    detail: missing
      ? `turn ${missTurn} lacks the optional "${missing.field}" of ${next[asked]!.call.name}; asked before calling`
      : `turn ${missTurn} lacks information that is no argument; asked before calling`,
    mistakeKey: next[asked]!.key,
    firstCalls: calls,
    firstQuestion: {
      question: missing
        ? `What should ${missing.field} of ${calls[asked]!.name} be?`
        : 'Could you tell me more about what you need?',
      missingFields: fields,
      call: calls[asked]!,
      alongside: calls.filter((_, i) => i !== asked),
      expectedKey: next[asked]!.key,
    },
  };
}

/**
 * What a correct run calls. Single-turn: each argument's acceptable values (call `index` of the
 * ground truth), in the form the call sends them (source text for Java/JavaScript, as
 * `groundTruthToolCall` writes the input). Multi-turn: the one value of each argument.
 */
function expectedCall(
  entry: BfclEntry,
  gt: GroundTruthToolCall,
  index?: number,
  byName?: Map<string, EntryTool>,
): ExpectedCall {
  const expected = { key: gt.key, tool: gt.call.name, input: gt.call.input, schema: gt.tool?.inputSchema };
  const single =
    entry.groundTruth?.kind === 'calls' && index !== undefined ? entry.groundTruth.calls[index] : undefined;
  if (!single) {
    return { ...expected, args: Object.fromEntries(Object.entries(gt.call.input).map(([k, v]) => [k, [v]])) };
  }
  const mapped = byName?.get(single.name);
  if (entry.language === 'python' || mapped?.mapping.argumentForm !== 'source-text') {
    return { ...expected, args: single.args };
  }
  const language = entry.language;
  const properties = mapped.doc.parameters?.properties ?? {};
  const args = Object.fromEntries(
    Object.entries(single.args).map(([key, values]) => [
      key,
      values.map((v) => (v === '' ? v : toSourceText(v, properties[key] ?? {}, language))),
    ]),
  );
  return { ...expected, args };
}

function faultyEcho(tool: Tool, fault: 'timeout' | 'rate_limited', options: CaseOptions): Tool {
  const timeoutMs = fault === 'timeout' ? options.faultTimeoutMs : options.toolTimeoutMs;
  return withFaultOnce(echoTool(tool, timeoutMs), fault, { retryAfterMs: options.retryAfterMs, timeoutMs });
}

/** The calls among `truth` that the data's own docs reject (`GROUND_TRUTH_QUIRKS`). */
function quirksOf(truth: GroundTruthToolCall[]): GroundTruthQuirk[] {
  const keys = new Set(truth.map((gt) => gt.key));
  return quirksFor('include', 'source-text').filter((quirk) => keys.has(quirk.call));
}

function transcript(messages: BfclMessage[]): Message[] {
  return messages.map((m) => ({ role: m.role === 'system' ? 'system' : 'user', content: m.content }));
}

/** A value as a user would say it, to look for in what they said. */
function spoken(value: unknown): string {
  return (typeof value === 'string' ? value : JSON.stringify(value)).toLowerCase();
}

function isRequired(tool: Tool | undefined, field: string): boolean {
  const required = tool?.inputSchema.required;
  return Array.isArray(required) && required.includes(field);
}
