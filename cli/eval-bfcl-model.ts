import { appendFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import cliProgress from 'cli-progress';
import { formatModelEvalTable, runModelEval } from '../bfcl/eval/model-eval.ts';
import { defaultReportPath, EvalOptionError, writeReport } from '../bfcl/eval/run-eval.ts';
import { filesForCategory, resolveDataDir } from '../bfcl/index.ts';
import { asLanguageModelV3 } from '../models/language-model.ts';
import { llamaCppFetch } from '../models/llama-cpp-fetch.ts';
import type { HintStyle } from '../models/render-hint.ts';
import { checkModelServer, checkReportFolder } from './cli-checks.ts';

/** The options of `toolwarden eval bfcl --model`, as commander parses them. */
export interface EvalBfclModelOptions {
  /** An OpenAI-compatible base URL, e.g. `http://127.0.0.1:8765/v1`. */
  model: string;
  modelId?: string;
  hints?: string;
  category?: string;
  limit?: string;
  json?: string;
  data?: string;
  concurrency?: number;
}

/**
 * `toolwarden eval bfcl --model URL`: a real model plans every case (`runModelEval`); prints the
 * table (accuracy at the first call and after repair, repair rate, turns, tokens, latency) and
 * writes the JSON report; each case is also appended as it ends to `<report>.records.jsonl`, so
 * an eval stopped half-way keeps what it measured. The exit code is 1 only when nothing could run.
 *
 * @throws EvalOptionError for a bad option; BfclDataError when the data cannot be found.
 */
export async function evalBfclModelCommand(
  options: EvalBfclModelOptions,
  io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream & { isTTY?: boolean } } = process,
): Promise<{ reportPath: string; exitCode: number }> {
  const hints = (options.hints ?? 'structured') as HintStyle;
  if (hints !== 'structured' && hints !== 'plain')
    throw new EvalOptionError(`--hints takes structured or plain, not "${options.hints}"`);
  let baseURL: URL;
  try {
    baseURL = new URL(options.model);
  } catch {
    throw new EvalOptionError(
      `--model takes an OpenAI-compatible base URL (http://127.0.0.1:8765/v1), not "${options.model}"`,
    );
  }
  checkReportFolder(options.json);
  await checkModelServer(baseURL);
  const categories = (options.category ?? 'simple_python,live_simple')
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  const limit = options.limit === undefined || options.limit === 'all' ? undefined : Number(options.limit);
  if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1))
    throw new EvalOptionError(`--limit takes a positive number or "all", not "${options.limit}"`);
  const resolved = await resolveDataDir({
    dir: options.data,
    files: [...new Set(categories.flatMap((category) => filesForCategory(category)))],
    stderr: io.stderr,
  });
  const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
  const provider = createOpenAICompatible({
    name: 'openai-compatible',
    baseURL: baseURL.href.replace(/\/$/, ''),
    // A no-op for servers that accept OpenAI's `content: null`; llama-cpp-python needs it.
    fetch: llamaCppFetch,
  });
  const modelId = options.modelId ?? 'default';
  const bar = io.stderr.isTTY
    ? new cliProgress.SingleBar(
        {
          stream: io.stderr,
          format: 'bfcl model eval {bar} {value}/{total} | {eta_formatted} left | {id}',
          hideCursor: false,
          clearOnComplete: true,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  // Each case as it ends, one JSON line beside the report: a long eval stopped half-way keeps
  // what it measured (the report itself is written at the end).
  const target = options.json ?? defaultReportPath().replace('bfcl-', 'bfcl-model-');
  const partial = `${target.replace(/\.json$/, '')}.records.jsonl`;
  await mkdir(dirname(resolve(partial)), { recursive: true });
  await writeFile(partial, '');
  const report = await runModelEval({
    dataDir: resolved.dir,
    categories,
    limit,
    model: () => asLanguageModelV3(provider.chatModel(modelId)),
    modelName: `${modelId} @ ${baseURL.href}`,
    hints,
    concurrency: options.concurrency ?? 1,
    onStart: (total) => {
      if (bar) bar.start(total, 0, { id: '' });
      else io.stderr.write(`bfcl model eval: ${total} cases over ${categories.join(', ')}, hints ${hints}\n`);
    },
    onRecord: (record, done) => {
      appendFileSync(partial, `${JSON.stringify(record)}\n`);
      if (bar) bar.increment(1, { id: record.id });
      else if (done % 20 === 0) io.stderr.write(`bfcl model eval: ${done} done\n`);
    },
  }).finally(() => bar?.stop());
  const reportPath = await writeReport(report as never, target);
  io.stdout.write(
    `${[
      formatModelEvalTable([...report.rows, report.total]),
      `model: ${report.model}; hints: ${hints}; ${report.total.cases} cases in ${(report.wallMs / 1000).toFixed(0)} s` +
        (report.skipped.length > 0 ? `; ${report.skipped.length} entries skipped (see the report)` : ''),
      `first call / after repair: the calls match BFCL's ground truth (its AST rules); hinted: the boundary refused a call; repaired: of those, fixed by the model`,
      `report: ${relative(process.cwd(), reportPath) || reportPath}`,
    ].join('\n')}\n`,
  );
  return { reportPath, exitCode: report.total.cases === 0 ? 1 : 0 };
}
