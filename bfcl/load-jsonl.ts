import { readFile } from 'node:fs/promises';

/**
 * Reading BFCL's JSON Lines files without stopping at the first bad byte: every problem is
 * reported with its file (and line), and loading goes on with what could be read.
 *
 * | what is wrong                                   | problem `kind`     | records kept          |
 * |-------------------------------------------------|--------------------|-----------------------|
 * | the file does not exist                         | `missing_file`     | none                  |
 * | the file cannot be read (permissions, a folder) | `unreadable_file`  | none                  |
 * | the file is one JSON document over many lines   | `not_json_lines`   | none                  |
 * | one line is not JSON                            | `bad_line`         | every other line      |
 *
 * `BFCL_v4_format_sensitivity.json` is the `not_json_lines` case in the real data: a pretty-printed
 * map from category to entry ids (data README, "Layout").
 */
export type LoadProblemKind =
  | 'missing_file'
  | 'unreadable_file'
  | 'not_json_lines'
  | 'bad_line'
  | 'bad_entry'
  | 'missing_ground_truth'
  | 'bad_ground_truth'
  | 'unknown_class';

/** One thing that could not be loaded; `line` is 1-based when the problem is on one line. */
export interface LoadProblem {
  kind: LoadProblemKind;
  file: string;
  line?: number;
  /** Entry id, when the problem belongs to one entry. */
  id?: string;
  message: string;
}

/** A parsed line: its 1-based line number and value. */
export interface JsonLine {
  line: number;
  value: unknown;
}

export interface JsonLinesResult {
  file: string;
  records: JsonLine[];
  problems: LoadProblem[];
  /** Non-empty lines that were not read as records (all of them for `not_json_lines`). */
  badLines: number;
}

/** Lines reported one by one before the rest are summed up in one problem. */
export const MAX_LINE_PROBLEMS = 20;

/** Reads and parses a JSON Lines file; never throws for a bad or absent file. */
export async function loadJsonLines(file: string): Promise<JsonLinesResult> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const error = err as NodeJS.ErrnoException;
    const kind = error.code === 'ENOENT' ? 'missing_file' : 'unreadable_file';
    const message =
      kind === 'missing_file'
        ? `${file}: file not found`
        : `${file}: cannot read the file (${error.code ?? error.name}: ${error.message})`;
    return { file, records: [], problems: [{ kind, file, message }], badLines: 0 };
  }
  return parseJsonLines(text, file);
}

/** Parses JSON Lines text; `file` only names the source in problems. */
export function parseJsonLines(text: string, file: string): JsonLinesResult {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const lines = body.split(/\r?\n/);
  const records: JsonLine[] = [];
  const bad: LoadProblem[] = [];
  lines.forEach((raw, index) => {
    if (raw.trim() === '') return;
    try {
      records.push({ line: index + 1, value: JSON.parse(raw) });
    } catch (err) {
      bad.push({
        kind: 'bad_line',
        file,
        line: index + 1,
        message: `${file}:${index + 1}: not JSON: ${(err as Error).message}`,
      });
    }
  });
  if (bad.length > 0) {
    const whole = wholeDocument(body);
    if (whole) {
      return {
        file,
        records: [],
        problems: [
          {
            kind: 'not_json_lines',
            file,
            message: `not JSON Lines: ${file} is one JSON ${whole} spread over ${countLines(body)} lines, not one JSON value per line`,
          },
        ],
        badLines: records.length + bad.length,
      };
    }
  }
  const problems = bad.slice(0, MAX_LINE_PROBLEMS);
  if (bad.length > MAX_LINE_PROBLEMS) {
    problems.push({
      kind: 'bad_line',
      file,
      message: `${file}: ${bad.length - MAX_LINE_PROBLEMS} more lines are not JSON (first ${MAX_LINE_PROBLEMS} listed)`,
    });
  }
  return { file, records, problems, badLines: bad.length };
}

/** `object`/`array` when the whole text is one JSON document of that kind, else undefined. */
function wholeDocument(text: string): string | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (Array.isArray(value)) return 'array';
    return value !== null && typeof value === 'object' ? 'object' : undefined;
  } catch {
    return undefined;
  }
}

function countLines(text: string): number {
  return text.replace(/\s+$/, '').split(/\r?\n/).length;
}
