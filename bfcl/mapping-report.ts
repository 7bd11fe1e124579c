import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { BfclFunctionDoc, BfclLanguage } from './bfcl-types.ts';
import { categoryLanguage } from './load-entries.ts';
import { type LoadProblem, loadJsonLines } from './load-jsonl.ts';
import {
  type ArgumentForm,
  type MappingCode,
  type MappingNoteCode,
  toolFromFunctionDoc,
} from './map-function-doc.ts';

/**
 * Maps every function doc of every BFCL file in a data folder (the `BFCL_v4_*.json` category
 * files and `multi_turn_func_doc/*.json`) to a tool, and counts how each one went: `exact`,
 * `approximate` (with the reasons), or `failed` (mapping or `toolFromJsonSchema` threw).
 * A file that cannot be read is listed in `problems`, and the count goes on.
 */
export interface MappingCounts {
  docs: number;
  exact: number;
  approximate: number;
  failed: number;
}

export interface ReasonCount {
  /** Docs with at least one finding of this code. */
  docs: number;
  /** Findings in all (a doc may have several). */
  occurrences: number;
  /** One finding as an example: `file: function.path: detail`. */
  example: string;
}

export interface MappingReport {
  dataDir: string;
  argumentForm: ArgumentForm;
  totals: MappingCounts;
  /** Per file, relative to the data folder. */
  files: Record<string, MappingCounts & { language: BfclLanguage }>;
  approximations: Partial<Record<MappingCode, ReasonCount>>;
  notes: Partial<Record<MappingNoteCode, ReasonCount>>;
  failures: { file: string; line: number; name: string; message: string }[];
  problems: LoadProblem[];
}

export interface MappingReportOptions {
  /** For the Java/JavaScript files; default `source-text` (BFCL's own form). */
  argumentForm?: ArgumentForm;
  /** Which files to map, by path relative to the data folder. Default: all. */
  filter?: (file: string) => boolean;
}

export async function mappingReport(
  dataDir: string,
  options: MappingReportOptions = {},
): Promise<MappingReport> {
  const argumentForm = options.argumentForm ?? 'source-text';
  const report: MappingReport = {
    dataDir,
    argumentForm,
    totals: { docs: 0, exact: 0, approximate: 0, failed: 0 },
    files: {},
    approximations: {},
    notes: {},
    failures: [],
    problems: [],
  };
  const files = (await docFiles(dataDir, report.problems)).filter(options.filter ?? (() => true));
  for (const file of files) {
    const read = await loadJsonLines(join(dataDir, file));
    report.problems.push(...read.problems);
    const category = /^BFCL_v4_(.+)\.json$/.exec(file)?.[1];
    const language = category ? categoryLanguage(category) : 'python';
    const counts = { docs: 0, exact: 0, approximate: 0, failed: 0, language };
    report.files[file] = counts;
    for (const record of read.records) {
      for (const doc of docsOf(record.value, !category)) {
        counts.docs++;
        try {
          const { mapping } = toolFromFunctionDoc(doc, { language, argumentForm });
          counts[mapping.fidelity]++;
          tally(report.approximations, mapping.approximations, `${file}: ${doc.name}`);
          tally(report.notes, mapping.notes, `${file}: ${doc.name}`);
        } catch (err) {
          counts.failed++;
          report.failures.push({
            file,
            line: record.line,
            name: String((doc as { name?: unknown }).name),
            message: (err as Error).message,
          });
        }
      }
    }
    for (const key of ['docs', 'exact', 'approximate', 'failed'] as const) report.totals[key] += counts[key];
  }
  return report;
}

/** A plain-text table of a report, for a terminal or a log. */
export function formatMappingReport(report: MappingReport): string {
  const { totals } = report;
  const lines = [
    `BFCL function docs in ${report.dataDir} (Java/JavaScript as ${report.argumentForm}):`,
    `  ${totals.docs} docs: ${totals.exact} exact, ${totals.approximate} approximate, ${totals.failed} failed`,
    '  approximate because (docs / findings):',
    ...reasonLines(report.approximations),
    '  notes (exact, but worth knowing) (docs / findings):',
    ...reasonLines(report.notes),
  ];
  for (const failure of report.failures) {
    lines.push(`  FAILED ${failure.file}:${failure.line} ${failure.name}: ${failure.message}`);
  }
  for (const problem of report.problems) lines.push(`  problem: ${problem.message}`);
  return lines.join('\n');
}

function reasonLines(counts: Partial<Record<string, ReasonCount>>): string[] {
  return Object.entries(counts)
    .sort((a, b) => b[1]!.docs - a[1]!.docs)
    .map(([code, count]) => `    ${code}: ${count!.docs} / ${count!.occurrences}  e.g. ${count!.example}`);
}

async function docFiles(dataDir: string, problems: LoadProblem[]): Promise<string[]> {
  const list = async (folder: string, prefix: string): Promise<string[]> => {
    try {
      return (await readdir(join(dataDir, folder)))
        .filter((name) => name.startsWith(prefix) && name.endsWith('.json'))
        .sort()
        .map((name) => (folder ? `${folder}/${name}` : name));
    } catch (err) {
      problems.push({
        kind: 'missing_file',
        file: join(dataDir, folder),
        message: `${join(dataDir, folder)}: cannot list the folder (${(err as Error).message})`,
      });
      return [];
    }
  };
  return [...(await list('', 'BFCL_v4_')), ...(await list('multi_turn_func_doc', ''))];
}

/** The docs of one line: an entry's `function` list, or the line itself in a doc file. */
function docsOf(value: unknown, isDocFile: boolean): BfclFunctionDoc[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  if (isDocFile) return [value as BfclFunctionDoc];
  const functions = (value as { function?: unknown }).function;
  return Array.isArray(functions) ? (functions as BfclFunctionDoc[]) : [];
}

function tally(
  into: Partial<Record<string, ReasonCount>>,
  findings: readonly { code: string; path: string; detail: string }[],
  where: string,
): void {
  const seen = new Set<string>();
  for (const finding of findings) {
    const count = into[finding.code] ?? {
      docs: 0,
      occurrences: 0,
      example: `${where}${finding.path ? `.${finding.path}` : ''}: ${finding.detail}`,
    };
    into[finding.code] = count;
    count.occurrences++;
    if (!seen.has(finding.code)) {
      seen.add(finding.code);
      count.docs++;
    }
  }
}
