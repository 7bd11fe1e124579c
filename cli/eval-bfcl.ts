import { relative } from 'node:path';
import cliProgress from 'cli-progress';
import { formatTable, percent } from '../bfcl/eval/format-table.ts';
import {
  defaultReportPath,
  EVAL_DEFAULTS,
  EvalOptionError,
  type EvalReport,
  runEval,
  writeReport,
} from '../bfcl/eval/run-eval.ts';
import { filesForCategory, resolveDataDir } from '../bfcl/index.ts';
import { MISTAKE_KINDS, type MistakeKind } from '../bfcl/mistake-model.ts';
import { checkReportFolder } from './cli-checks.ts';

/** The options of `toolwarden eval bfcl`, as commander parses them. */
export interface EvalBfclOptions {
  category?: string;
  /** A count, or `all`. */
  limit?: string;
  seed?: string;
  json?: string;
  data?: string;
  concurrency?: number;
  mistakes?: string;
}

/**
 * Runs `toolwarden eval bfcl`: finds the data (`resolveDataDir`), runs the eval with a progress
 * bar on stderr (when it is a terminal), prints the table and the totals, and writes the JSON
 * report. Sets a failing exit code when a run was left unfinished or the boundary rejected a
 * ground-truth call no data quirk explains.
 *
 * @throws BfclDataError when the data cannot be found or downloaded; EvalOptionError for a bad option.
 */
export async function evalBfclCommand(
  options: EvalBfclOptions,
  io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream & { isTTY?: boolean } } = process,
): Promise<{ reportPath: string; exitCode: number }> {
  const categories = options.category !== undefined ? list(options.category) : EVAL_DEFAULTS.categories;
  if (categories.length === 0)
    throw new EvalOptionError(`--category names no category: "${options.category}"`);
  const limit = parseLimit(options.limit);
  checkReportFolder(options.json);
  const kinds = options.mistakes ? parseKinds(options.mistakes) : undefined;
  const resolved = await resolveDataDir({
    dir: options.data,
    files: [...new Set(categories.flatMap((category) => filesForCategory(category)))],
    stderr: io.stderr,
  });

  const bar = io.stderr.isTTY
    ? new cliProgress.SingleBar(
        {
          stream: io.stderr,
          format: 'bfcl eval {bar} {value}/{total} runs | {eta_formatted} left | {id}',
          hideCursor: false,
          clearOnComplete: true,
          etaBuffer: 50,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  const report = await (async () => {
    try {
      return await runEval({
        dataDir: resolved.dir,
        categories,
        limit,
        seed: options.seed ?? EVAL_DEFAULTS.seed,
        concurrency: options.concurrency ?? EVAL_DEFAULTS.concurrency,
        kinds,
        onStart: (total) => {
          if (bar) bar.start(total, 0, { id: '' });
          else io.stderr.write(`bfcl eval: ${total} runs over ${categories.join(', ')}\n`);
        },
        onRecord: (record) => bar?.increment(1, { id: record.id }),
      });
    } finally {
      bar?.stop();
    }
  })();
  const reportPath = await writeReport(report, options.json ?? defaultReportPath());

  const { total, withoutQuirks } = report.summary;
  const gt = report.groundTruth;
  const lines = [
    PLANNED_BY,
    formatTable(report.summary.rows),
    `ground truth: ${gt.accepted} of ${gt.calls} calls accepted by the boundary as they are, with no hint; ` +
      `${gt.quirks.length} rejected, each a data quirk listed in GROUND_TRUTH_QUIRKS; ${gt.unexplained.length} unexplained`,
    `hint-reason accuracy on injected mistakes: ${total.hintAccurate}/${total.hintExpected} (${percent(total.hintAccurate, total.hintExpected)}); ` +
      `correct: ${total.correct}/${total.runs} (${percent(total.correct, total.runs)}), ` +
      `${withoutQuirks.correct}/${withoutQuirks.runs} (${percent(withoutQuirks.correct, withoutQuirks.runs)}) without data quirks`,
    `runs: ${total.runs} (${total.completed} completed, ${total.capped} capped, ${total.failed} failed, ` +
      `${total.unfinished} left running or awaiting) in ${(report.wallMs / 1000).toFixed(1)} s, concurrency ${report.options.concurrency}` +
      (report.skipped.length > 0 ? `; ${report.skipped.length} entries skipped (see the report)` : ''),
    `tools: BFCL functions are not callable services; the executors validate and echo their input`,
    `report: ${relative(process.cwd(), reportPath) || reportPath}`,
  ];
  io.stdout.write(`${lines.join('\n')}\n`);
  const dataFailure = reportLoadProblems(report, io.stderr);
  const exitCode = dataFailure || total.unfinished > 0 || gt.unexplained.length > 0 ? 1 : 0;
  return { reportPath, exitCode };
}

/**
 * What plans these runs, said before the numbers (issue 28 item 8): no model is involved, so
 * "correct" is the tool boundary's and the repair's, never a model's accuracy.
 */
export const PLANNED_BY =
  'planner: no model. Each run replays the BFCL ground-truth calls with injected mistakes (--mistakes), and a ' +
  'rule-based planner repairs them from the RetryHints; "correct" measures the tool boundary and that repair, ' +
  'not a model. A real model: toolwarden eval bfcl --model <OpenAI-compatible URL>';

/** Share of a category's entries that may be dropped as unreadable before the eval fails. */
export const MAX_DROPPED_SHARE = 0.05;

/**
 * Says what could not be loaded (the first problems, then a count) and whether the data is too
 * broken for the numbers to mean anything: nothing ran, or more than {@link MAX_DROPPED_SHARE}
 * of the entries were dropped (issue 12, defect 7: corrupt data used to end in exit 0 and an
 * empty table).
 */
function reportLoadProblems(report: EvalReport, stderr: NodeJS.WritableStream): boolean {
  const { loadProblems, load } = report;
  const shown = 5;
  for (const problem of loadProblems.slice(0, shown)) stderr.write(`bfcl eval: data problem: ${problem}\n`);
  if (loadProblems.length > shown) {
    stderr.write(
      `bfcl eval: ${loadProblems.length - shown} more data problems (see the report's loadProblems)\n`,
    );
  }
  const seen = load.entries + load.dropped;
  if (report.summary.total.runs === 0) {
    stderr.write(
      `bfcl eval: failed: nothing ran (${load.entries} entries loaded, ${load.dropped} dropped)\n`,
    );
    return true;
  }
  if (seen > 0 && load.dropped / seen > MAX_DROPPED_SHARE) {
    stderr.write(
      `bfcl eval: failed: ${load.dropped} of ${seen} entries could not be loaded (more than ${MAX_DROPPED_SHARE * 100}%)\n`,
    );
    return true;
  }
  return false;
}

function list(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

function parseLimit(text: string | undefined): number | undefined {
  if (text === undefined) return EVAL_DEFAULTS.limit;
  if (text === 'all') return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1)
    throw new EvalOptionError(`--limit takes a positive number or "all", not "${text}"`);
  return n;
}

function parseKinds(text: string): MistakeKind[] {
  const kinds = list(text);
  const unknown = kinds.filter((kind) => !(MISTAKE_KINDS as readonly string[]).includes(kind));
  if (unknown.length > 0) {
    throw new EvalOptionError(
      `--mistakes: unknown ${unknown.join(', ')}; known: ${MISTAKE_KINDS.join(', ')}`,
    );
  }
  return kinds as MistakeKind[];
}
