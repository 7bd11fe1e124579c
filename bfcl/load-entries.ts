import { join } from 'node:path';
import type {
  BfclEntry,
  BfclFunctionDoc,
  BfclLanguage,
  BfclMessage,
  GroundTruth,
  GroundTruthCall,
  MultiTurnCall,
} from './bfcl-types.ts';
import { type LoadProblem, loadJsonLines } from './load-jsonl.ts';
import { bindPositional, parsePythonCall } from './parse-python-call.ts';

/**
 * Loads one BFCL category: its entries joined with their ground truth, and for multi-turn and
 * agentic categories the function docs of the entry's API classes. Problems (a missing file, a
 * bad line, an entry without ground truth, a call string that does not parse) are collected and
 * loading goes on.
 *
 * | category kind                       | `functions` from                             | `groundTruth` |
 * |-------------------------------------|----------------------------------------------|---------------|
 * | single-turn (`simple_python`, ...)  | the entry's `function`                        | `calls`       |
 * | relevance / irrelevance             | the entry's `function`                        | none (no file)|
 * | `multi_turn_*`                      | `multi_turn_func_doc/` of `involved_classes`  | `turns`       |
 * | `memory`, `web_search`              | `multi_turn_func_doc/` of `involved_classes`  | `answers`     |
 *
 * Held-out functions (`missed_function`) are removed from `functions` and listed by turn, as
 * upstream `populate_test_cases_with_predefined_functions` does.
 */

/** Every category of BFCL v4 at the pinned commit that has a JSON Lines file of entries. */
export const BFCL_CATEGORIES = [
  'simple_python',
  'simple_java',
  'simple_javascript',
  'multiple',
  'parallel',
  'parallel_multiple',
  'irrelevance',
  'live_simple',
  'live_multiple',
  'live_parallel',
  'live_parallel_multiple',
  'live_irrelevance',
  'live_relevance',
  'multi_turn_base',
  'multi_turn_miss_func',
  'multi_turn_miss_param',
  'multi_turn_long_context',
  'memory',
  'web_search',
] as const;
export type BfclCategory = (typeof BFCL_CATEGORIES)[number];

/** Categories with no `possible_answer` file: the right answer is to call nothing. */
const WITHOUT_GROUND_TRUTH = new Set(['irrelevance', 'live_irrelevance', 'live_relevance']);

/**
 * API class → doc file, as upstream `MULTI_TURN_FUNC_DOC_FILE_MAPPING`. The memory entries name
 * the class `MemoryAPI`; BFCL runs them once per backend (`MemoryAPI_kv`, ...).
 */
export const CLASS_DOC_FILES: Readonly<Record<string, string>> = {
  GorillaFileSystem: 'gorilla_file_system.json',
  MathAPI: 'math_api.json',
  MessageAPI: 'message_api.json',
  TwitterAPI: 'posting_api.json',
  TicketAPI: 'ticket_api.json',
  TradingBot: 'trading_bot.json',
  TravelAPI: 'travel_booking.json',
  VehicleControlAPI: 'vehicle_control.json',
  WebSearchAPI: 'web_search.json',
  MemoryAPI_kv: 'memory_kv.json',
  MemoryAPI_vector: 'memory_vector.json',
  MemoryAPI_rec_sum: 'memory_rec_sum.json',
};

export type MemoryBackend = 'kv' | 'vector' | 'rec_sum';

export interface LoadCategoryOptions {
  /** Which memory backend's docs stand for `MemoryAPI`. Default `kv`. */
  memoryBackend?: MemoryBackend;
}

export interface LoadCategoryResult {
  category: string;
  entries: BfclEntry[];
  problems: LoadProblem[];
  /** Data files read, relative to the data folder. */
  files: string[];
  /** Entries that could not be loaded: broken lines, malformed entries, entries with no ground truth. */
  dropped: number;
}

/** `BFCL_v4_<category>.json`. */
export function categoryFile(category: string): string {
  return `BFCL_v4_${category}.json`;
}

/** `possible_answer/BFCL_v4_<category>.json`, or undefined for categories that have none. */
export function possibleAnswerFile(category: string): string | undefined {
  return WITHOUT_GROUND_TRUTH.has(category) ? undefined : `possible_answer/${categoryFile(category)}`;
}

/** As upstream `is_java` / `is_js`. */
export function categoryLanguage(category: string): BfclLanguage {
  if (category.includes('javascript')) return 'javascript';
  return category.includes('java') ? 'java' : 'python';
}

/** Categories whose entries take their docs from `multi_turn_func_doc/`. */
export function usesClassDocs(category: string): boolean {
  return category.startsWith('multi_turn') || category === 'memory' || category === 'web_search';
}

/** The doc files (relative paths) the given API classes need. */
export function classDocFiles(classes: readonly string[], options: LoadCategoryOptions = {}): string[] {
  const files = classes
    .map((name) => CLASS_DOC_FILES[resolveClass(name, options)])
    .filter((file): file is string => file !== undefined);
  return [...new Set(files)].map((file) => `multi_turn_func_doc/${file}`);
}

export async function loadCategory(
  dataDir: string,
  category: string,
  options: LoadCategoryOptions = {},
): Promise<LoadCategoryResult> {
  const language = categoryLanguage(category);
  const entryFile = categoryFile(category);
  const answerFile = possibleAnswerFile(category);
  const files = [entryFile, ...(answerFile ? [answerFile] : [])];
  const problems: LoadProblem[] = [];

  const read = await loadJsonLines(join(dataDir, entryFile));
  problems.push(...read.problems);
  let dropped = read.badLines;
  const answers = new Map<string, { line: number; value: Record<string, unknown> }>();
  if (answerFile) {
    const answerRead = await loadJsonLines(join(dataDir, answerFile));
    problems.push(...answerRead.problems);
    for (const record of answerRead.records) {
      if (isRecord(record.value) && typeof record.value.id === 'string') {
        answers.set(record.value.id, { line: record.line, value: record.value });
      } else {
        problems.push({
          kind: 'bad_entry',
          file: answerRead.file,
          line: record.line,
          message: `${answerRead.file}:${record.line}: a ground-truth line needs a string "id"`,
        });
      }
    }
  }

  const classDocs = new ClassDocs(dataDir, options, problems);
  const entries: BfclEntry[] = [];
  const seen = new Set<string>();
  for (const record of read.records) {
    const where = `${read.file}:${record.line}`;
    const raw = record.value;
    const shapeProblem = describeEntryShape(raw);
    if (shapeProblem) {
      problems.push({
        kind: 'bad_entry',
        file: read.file,
        line: record.line,
        message: `${where}: ${shapeProblem}`,
      });
      dropped++;
      continue;
    }
    const value = raw as RawEntry;
    seen.add(value.id);
    const involvedClasses = (value.involved_classes ?? []).map(String);
    let functions: BfclFunctionDoc[] = value.function ?? [];
    if (usesClassDocs(category)) {
      functions = [];
      for (const name of involvedClasses) functions.push(...(await classDocs.get(name, value.id, read.file)));
    }
    const { kept, heldOut } = holdOut(functions, value.missed_function);
    const entry: BfclEntry = {
      id: value.id,
      category,
      language,
      turns: value.question,
      functions: kept,
      heldOutFunctions: heldOut,
      excludedFunctions: (value.excluded_function ?? []).map(String),
      involvedClasses,
      initialConfig: isRecord(value.initial_config) ? value.initial_config : undefined,
      source: { file: entryFile, line: record.line },
    };
    const answer = answers.get(value.id);
    if (answer) {
      const parsed = parseGroundTruth(answer.value.ground_truth, [...functions]);
      if (parsed.ok) entry.groundTruth = parsed.value;
      for (const message of parsed.problems) {
        problems.push({
          kind: 'bad_ground_truth',
          file: answerFile!,
          line: answer.line,
          id: value.id,
          message: `${answerFile}:${answer.line} (${value.id}): ${message}`,
        });
      }
    } else if (answerFile) {
      dropped++;
      problems.push({
        kind: 'missing_ground_truth',
        file: answerFile,
        id: value.id,
        message: `${answerFile}: no ground truth for entry ${value.id} (${where})`,
      });
    }
    entries.push(entry);
  }
  for (const [id, answer] of answers) {
    if (!seen.has(id)) {
      problems.push({
        kind: 'bad_ground_truth',
        file: answerFile!,
        line: answer.line,
        id,
        message: `${answerFile}:${answer.line}: ground truth for ${id}, which ${entryFile} does not have`,
      });
    }
  }
  return { category, entries, problems, files: [...files, ...classDocs.files], dropped };
}

interface RawEntry {
  id: string;
  question: BfclMessage[][];
  function?: BfclFunctionDoc[];
  involved_classes?: unknown[];
  missed_function?: Record<string, unknown>;
  excluded_function?: unknown[];
  initial_config?: unknown;
}

function describeEntryShape(value: unknown): string | undefined {
  if (!isRecord(value)) return 'an entry must be a JSON object';
  if (typeof value.id !== 'string') return 'an entry needs a string "id"';
  const turns = value.question;
  if (!Array.isArray(turns) || !turns.every(Array.isArray)) {
    return `entry ${value.id}: "question" must be a list of turns, each a list of messages`;
  }
  const messages = (turns as unknown[][]).flat();
  if (!messages.every((m) => isRecord(m) && typeof m.role === 'string' && typeof m.content === 'string')) {
    return `entry ${value.id}: every message needs a string "role" and "content"`;
  }
  if (value.function !== undefined) {
    if (!Array.isArray(value.function)) return `entry ${value.id}: "function" must be a list of docs`;
    const bad = value.function.findIndex((doc) => !isRecord(doc) || typeof doc.name !== 'string');
    if (bad >= 0) return `entry ${value.id}: function ${bad} needs a string "name"`;
  }
  if (value.involved_classes !== undefined && !Array.isArray(value.involved_classes)) {
    return `entry ${value.id}: "involved_classes" must be a list`;
  }
  return undefined;
}

function holdOut(
  functions: BfclFunctionDoc[],
  missed: Record<string, unknown> | undefined,
): { kept: BfclFunctionDoc[]; heldOut: BfclEntry['heldOutFunctions'] } {
  const kept = [...functions];
  const heldOut: BfclEntry['heldOutFunctions'] = [];
  for (const [turn, names] of Object.entries(missed ?? {})) {
    const docs: BfclFunctionDoc[] = [];
    for (const name of Array.isArray(names) ? names : []) {
      const index = kept.findIndex((doc) => doc.name === name);
      if (index >= 0) docs.push(...kept.splice(index, 1));
    }
    heldOut.push({ turn: Number(turn), functions: docs });
  }
  heldOut.sort((a, b) => a.turn - b.turn);
  return { kept, heldOut };
}

/** Parses a `ground_truth` value; `functions` binds positional arguments of multi-turn calls. */
export function parseGroundTruth(
  value: unknown,
  functions: readonly BfclFunctionDoc[],
): { ok: true; value: GroundTruth; problems: string[] } | { ok: false; problems: string[] } {
  if (!Array.isArray(value)) return { ok: false, problems: ['"ground_truth" must be a list'] };
  if (value.every((item) => typeof item === 'string')) {
    return { ok: true, value: { kind: 'answers', answers: value as string[] }, problems: [] };
  }
  if (value.every(Array.isArray)) {
    const problems: string[] = [];
    const turns = (value as unknown[][]).map((turn, turnIndex) =>
      turn.flatMap((source): MultiTurnCall[] => {
        try {
          if (typeof source !== 'string') throw new Error('a call must be a string');
          const call = parsePythonCall(source);
          const doc = functions.find((fn) => fn.name === call.name);
          if (!doc) throw new Error(`the entry has no function ${call.name} (in ${source})`);
          const names = Object.keys(doc.parameters?.properties ?? {});
          return [{ name: call.name, args: bindPositional(call, names), source }];
        } catch (err) {
          problems.push(`turn ${turnIndex}: ${(err as Error).message}`);
          return [];
        }
      }),
    );
    return { ok: true, value: { kind: 'turns', turns }, problems };
  }
  const calls: GroundTruthCall[] = [];
  const problems: string[] = [];
  for (const item of value) {
    const keys = isRecord(item) ? Object.keys(item) : [];
    const args = keys.length === 1 ? (item as Record<string, unknown>)[keys[0]!] : undefined;
    if (!isRecord(args) || !Object.values(args).every(Array.isArray)) {
      return {
        ok: false,
        problems: ['a single-turn ground-truth call must be {"<function>": {"<arg>": [acceptable values]}}'],
      };
    }
    calls.push({ name: keys[0]!, args: args as Record<string, unknown[]> });
    if (!functions.some((fn) => fn.name === keys[0])) problems.push(`the entry has no function ${keys[0]}`);
  }
  return { ok: true, value: { kind: 'calls', calls }, problems };
}

function resolveClass(name: string, options: LoadCategoryOptions): string {
  return name === 'MemoryAPI' ? `MemoryAPI_${options.memoryBackend ?? 'kv'}` : name;
}

/** Reads each class's doc file once per category, reporting unknown classes and bad files once. */
class ClassDocs {
  private readonly cache = new Map<string, Promise<BfclFunctionDoc[]>>();
  private readonly reported = new Set<string>();
  readonly files: string[] = [];

  constructor(
    private readonly dataDir: string,
    private readonly options: LoadCategoryOptions,
    private readonly problems: LoadProblem[],
  ) {}

  async get(className: string, entryId: string, entryFile: string): Promise<BfclFunctionDoc[]> {
    const resolved = resolveClass(className, this.options);
    const file = CLASS_DOC_FILES[resolved];
    if (!file) {
      if (!this.reported.has(resolved)) {
        this.reported.add(resolved);
        this.problems.push({
          kind: 'unknown_class',
          file: entryFile,
          id: entryId,
          message: `${entryFile} (${entryId}): unknown API class "${className}"; known: ${Object.keys(CLASS_DOC_FILES).join(', ')}`,
        });
      }
      return [];
    }
    let docs = this.cache.get(file);
    if (!docs) {
      const relative = `multi_turn_func_doc/${file}`;
      this.files.push(relative);
      docs = loadJsonLines(join(this.dataDir, relative)).then((read) => {
        this.problems.push(...read.problems);
        const out: BfclFunctionDoc[] = [];
        for (const record of read.records) {
          if (isRecord(record.value) && typeof record.value.name === 'string') {
            out.push(record.value as unknown as BfclFunctionDoc);
          } else {
            this.problems.push({
              kind: 'bad_entry',
              file: read.file,
              line: record.line,
              message: `${read.file}:${record.line}: a function doc needs a string "name"`,
            });
          }
        }
        return out;
      });
      this.cache.set(file, docs);
    }
    return structuredClone(await docs);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
