/**
 * The shapes of BFCL v4 data as the files write them (data README, "Layout"; upstream
 * `bfcl_eval/data` at the pinned commit). Field names are BFCL's, so a reader can hold a line of
 * the file next to the type.
 */

/** BFCL's parameter schema: JSON-Schema-like, with Python/Java/JavaScript type names. */
export interface BfclSchema {
  /** `dict`, `integer`, `float`, `string`, `boolean`, `array`, `tuple`, `any`, or a Java/JS name. */
  type?: string;
  description?: string;
  properties?: Record<string, BfclSchema>;
  required?: string[];
  items?: BfclSchema;
  enum?: unknown[];
  default?: unknown;
  /** Not JSON Schema: `true`, `"true"`, `"yes"` mark a parameter the caller may leave out. */
  optional?: unknown;
  format?: string;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  [keyword: string]: unknown;
}

/** One function doc: `{name, description, parameters}`; multi-turn docs add `response`. */
export interface BfclFunctionDoc {
  name: string;
  description?: string;
  parameters?: BfclSchema;
  response?: unknown;
}

export interface BfclMessage {
  role: string;
  content: string;
}

/** The language whose types a category's docs use; decides how Java/JS arguments travel. */
export type BfclLanguage = 'python' | 'java' | 'javascript';

/**
 * Single-turn ground truth: one call, each argument with its acceptable values. An empty string
 * among them means the argument may be left out (BFCL's checker: `"" in possible_answer[param]`).
 * A dict value lists its own fields' acceptable values the same way.
 */
export interface GroundTruthCall {
  name: string;
  args: Record<string, unknown[]>;
}

/** One call of a multi-turn ground truth, parsed from its Python source and bound to names. */
export interface MultiTurnCall {
  name: string;
  args: Record<string, unknown>;
  /** The call as the file writes it, e.g. `mv(source='a.pdf', destination='temp')`. */
  source: string;
}

export type GroundTruth =
  /** Single-turn categories: every call the model should make (in any order for parallel). */
  | { kind: 'calls'; calls: GroundTruthCall[] }
  /** Multi-turn categories: the calls of each turn (an empty turn expects no call). */
  | { kind: 'turns'; turns: MultiTurnCall[][] }
  /** Agentic categories (memory, web search): acceptable final answers. */
  | { kind: 'answers'; answers: string[] };

/** One test entry of a category, joined with its ground truth. */
export interface BfclEntry {
  id: string;
  category: string;
  language: BfclLanguage;
  /** `question`: the user turns, each a list of messages (empty for a turn that only adds tools). */
  turns: BfclMessage[][];
  /** The function docs offered from the first turn. */
  functions: BfclFunctionDoc[];
  /** `missed_function`: docs held back from `functions` and offered from turn `turn` (0-based). */
  heldOutFunctions: { turn: number; functions: BfclFunctionDoc[] }[];
  /**
   * `excluded_function` as the data writes it. BFCL's code at the pinned commit never reads it,
   * so these functions stay in `functions`, as in BFCL's own runs.
   */
  excludedFunctions: string[];
  /** Multi-turn and agentic entries: the API classes whose docs make up `functions`. */
  involvedClasses: string[];
  /** Multi-turn entries: the starting state of each API class. */
  initialConfig?: Record<string, unknown>;
  groundTruth?: GroundTruth;
  source: { file: string; line: number };
}
