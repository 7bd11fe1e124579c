import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import cliProgress from 'cli-progress';
import {
  type BfclCategory,
  CLASS_DOC_FILES,
  categoryFile,
  type LoadCategoryOptions,
  possibleAnswerFile,
} from './load-entries.ts';
import { parseJsonLines } from './load-jsonl.ts';

/**
 * Where the BFCL data comes from. The first source that applies wins:
 *
 * | # | source     | where                                                        | when it applies                 |
 * |---|------------|--------------------------------------------------------------|---------------------------------|
 * | 1 | `option`   | `dir` (the CLI's `--data DIR`)                                | given (must be a folder)        |
 * | 2 | `env`      | `TOOLWARDEN_BFCL_DIR`                                         | set (must be a folder)          |
 * | 3 | `repo`     | `<repo root>/../shared/data/bfcl` (this project's machines, CI) | the folder exists             |
 * | 4 | `cache`    | `$XDG_CACHE_HOME/toolwarden/bfcl` or `~/.cache/toolwarden/bfcl` | it holds every needed file    |
 * | 5 | `download` | the pinned upstream files, fetched into the cache             | otherwise                       |
 *
 * The repo root is found from this module's own location (the nearest folder above it whose
 * `package.json` is named `toolwarden`), never from the working directory.
 *
 * Downloads fetch only the files asked for, from
 * `https://raw.githubusercontent.com/ShishirPatil/gorilla/<commit>/berkeley-function-call-leaderboard/bfcl_eval/data/<file>`
 * (base URL overridable by `baseUrl` or `TOOLWARDEN_BFCL_BASE_URL`). Each file is checked
 * (non-empty, JSON Lines) before it is written, and written atomically (temp file, then rename),
 * so the cache never holds half a file. A progress bar goes to stderr when it is a TTY, or when
 * `progress: true`.
 */
export const BFCL_COMMIT = '6ea57973c7a6097fd7c5915698c54c17c5b1b6c8';
export const BFCL_DEFAULT_BASE_URL = `https://raw.githubusercontent.com/ShishirPatil/gorilla/${BFCL_COMMIT}/berkeley-function-call-leaderboard/bfcl_eval/data`;
export const BFCL_DIR_ENV = 'TOOLWARDEN_BFCL_DIR';
export const BFCL_BASE_URL_ENV = 'TOOLWARDEN_BFCL_BASE_URL';

export type DataSource = 'option' | 'env' | 'repo' | 'cache' | 'download';

export interface ResolveDataDirOptions {
  /** An explicit folder: the CLI's `--data DIR`. */
  dir?: string;
  /** Files the command needs, relative to the data folder ({@link filesForCategory}). */
  files?: readonly string[];
  /** Default `process.env`. */
  env?: Record<string, string | undefined>;
  /** Default: found from this module's location. */
  repoRoot?: string;
  /** Default: `$XDG_CACHE_HOME/toolwarden/bfcl`, else `~/.cache/toolwarden/bfcl`. */
  cacheDir?: string;
  /** Default: `TOOLWARDEN_BFCL_BASE_URL`, else {@link BFCL_DEFAULT_BASE_URL}. */
  baseUrl?: string;
  /** Show a progress bar while downloading. Default: when `stderr` is a TTY. */
  progress?: boolean;
  /** Where the progress bar goes. Default `process.stderr`. */
  stderr?: NodeJS.WritableStream & { isTTY?: boolean };
  /** Per-file download limit in milliseconds. Default 60 000. */
  timeoutMs?: number;
  /** Default: the global `fetch`. */
  fetch?: typeof fetch;
}

export interface ResolvedDataDir {
  dir: string;
  source: DataSource;
  /** Files fetched by this call (relative paths); empty unless `source` is `download`. */
  downloaded: string[];
}

/** The data cannot be found or fetched; `message` says why and how else to provide it. */
export class BfclDataError extends Error {
  override readonly name = 'BfclDataError';
  constructor(
    message: string,
    readonly details: { url?: string; status?: number; file?: string; cacheDir?: string } = {},
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

/** API classes each class-doc category can involve (checked against the data at the commit). */
const CATEGORY_CLASSES: Record<string, readonly string[]> = {
  multi_turn: [
    'GorillaFileSystem',
    'MathAPI',
    'MessageAPI',
    'TwitterAPI',
    'TicketAPI',
    'TradingBot',
    'TravelAPI',
    'VehicleControlAPI',
  ],
  memory: ['MemoryAPI'],
  web_search: ['WebSearchAPI'],
};

/**
 * The files (relative to the data folder) that loading `category` reads: its entries, its
 * ground truth when it has one, and the doc files of the API classes it can involve.
 */
export function filesForCategory(
  category: BfclCategory | string,
  options: LoadCategoryOptions = {},
): string[] {
  const answers = possibleAnswerFile(category);
  const classes = CATEGORY_CLASSES[category.startsWith('multi_turn') ? 'multi_turn' : category] ?? [];
  const docs = classes
    .map((name) => (name === 'MemoryAPI' ? `MemoryAPI_${options.memoryBackend ?? 'kv'}` : name))
    .map((name) => `multi_turn_func_doc/${CLASS_DOC_FILES[name]}`);
  return [categoryFile(category), ...(answers ? [answers] : []), ...docs];
}

export async function resolveDataDir(options: ResolveDataDirOptions = {}): Promise<ResolvedDataDir> {
  const env = options.env ?? process.env;
  const cacheDir = options.cacheDir ?? defaultCacheDir(env);
  if (options.dir !== undefined) {
    return { dir: requireFolder(options.dir, '--data', cacheDir), source: 'option', downloaded: [] };
  }
  const fromEnv = env[BFCL_DIR_ENV];
  if (fromEnv) {
    return { dir: requireFolder(fromEnv, BFCL_DIR_ENV, cacheDir), source: 'env', downloaded: [] };
  }
  const shared = repoSharedDataDir(options.repoRoot);
  if (shared && isFolder(shared)) return { dir: shared, source: 'repo', downloaded: [] };

  const files = options.files ?? [];
  const missing = files.filter((file) => !existsSync(join(cacheDir, file)));
  if (missing.length === 0 && (files.length > 0 || isFolder(cacheDir))) {
    return { dir: cacheDir, source: 'cache', downloaded: [] };
  }
  if (files.length === 0) {
    throw new BfclDataError(`No BFCL data found. ${otherWays(cacheDir)}`, { cacheDir });
  }
  await downloadFiles(missing, { ...options, env, cacheDir });
  return { dir: cacheDir, source: 'download', downloaded: missing };
}

/** `<repo root>/../shared/data/bfcl`, or undefined when the repo root cannot be found. */
export function repoSharedDataDir(repoRoot: string | undefined = findRepoRoot()): string | undefined {
  return repoRoot ? resolve(repoRoot, '..', 'shared', 'data', 'bfcl') : undefined;
}

/** The nearest folder above this module whose `package.json` is named `toolwarden`. */
export function findRepoRoot(from: string = dirname(fileURLToPath(import.meta.url))): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown };
      if (pkg.name === 'toolwarden') return dir;
    } catch {
      // no package.json here, or not JSON: keep going up
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** `$XDG_CACHE_HOME/toolwarden/bfcl` (when absolute, as the XDG spec asks), else `~/.cache/...`. */
export function defaultCacheDir(env: Record<string, string | undefined> = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.cache');
  return join(base, 'toolwarden', 'bfcl');
}

/**
 * Fetches `files` (relative paths) into `cacheDir`, checking each and writing it atomically.
 *
 * @throws BfclDataError naming the URL, the network error or HTTP status, and the other ways to
 *   provide the data. Files fetched before the failure stay in the cache.
 */
export async function downloadFiles(
  files: readonly string[],
  options: ResolveDataDirOptions & { cacheDir: string },
): Promise<void> {
  const env = options.env ?? process.env;
  const baseUrl = (options.baseUrl ?? env[BFCL_BASE_URL_ENV] ?? BFCL_DEFAULT_BASE_URL).replace(/\/+$/, '');
  const stderr = options.stderr ?? process.stderr;
  const showBar = options.progress ?? stderr.isTTY === true;
  const bar = showBar
    ? new cliProgress.SingleBar(
        {
          stream: stderr,
          format: 'BFCL data {bar} {value}/{total} files | {file}',
          noTTYOutput: true,
          notTTYSchedule: 1_000,
          hideCursor: false,
          clearOnComplete: false,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  bar?.start(files.length, 0, { file: files[0] ?? '' });
  const fetchFile = options.fetch ?? fetch;
  try {
    const queue = [...files];
    const worker = async (): Promise<void> => {
      for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
        bar?.update({ file });
        await downloadOne(file, baseUrl, options.cacheDir, fetchFile, options.timeoutMs ?? 60_000);
        bar?.increment(1, { file });
      }
    };
    await Promise.all(Array.from({ length: Math.min(4, files.length) }, worker));
  } finally {
    bar?.stop();
  }
}

async function downloadOne(
  file: string,
  baseUrl: string,
  cacheDir: string,
  fetchFile: typeof fetch,
  timeoutMs: number,
): Promise<void> {
  const url = `${baseUrl}/${file.split('/').map(encodeURIComponent).join('/')}`;
  let text: string;
  try {
    const response = await fetchFile(url, { signal: AbortSignal.timeout(timeoutMs) });
    if (!response.ok) {
      throw new BfclDataError(
        `Could not download the BFCL data file ${url}: HTTP ${response.status} ${response.statusText}. ${otherWays(cacheDir)}`,
        { url, status: response.status, file, cacheDir },
      );
    }
    text = await response.text();
  } catch (err) {
    if (err instanceof BfclDataError) throw err;
    throw new BfclDataError(
      `Could not download the BFCL data file ${url}: ${networkError(err)}. ${otherWays(cacheDir)}`,
      { url, file, cacheDir },
      { cause: err },
    );
  }
  const problem = checkContent(file, text);
  if (problem) {
    throw new BfclDataError(
      `The downloaded BFCL data file ${url} is unusable: ${problem}. ${otherWays(cacheDir)}`,
      {
        url,
        file,
        cacheDir,
      },
    );
  }
  const target = join(cacheDir, file);
  await mkdir(dirname(target), { recursive: true });
  const temp = `${target}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    await writeFile(temp, text, 'utf8');
    await rename(temp, target);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}

/** Why a downloaded text cannot be a BFCL file, or undefined when it can. */
function checkContent(file: string, text: string): string | undefined {
  if (text.trim() === '') return 'it is empty';
  if (file.endsWith('BFCL_v4_format_sensitivity.json')) {
    // The one BFCL file that is a single JSON document, not JSON Lines.
    try {
      JSON.parse(text);
      return undefined;
    } catch (err) {
      return `not JSON: ${(err as Error).message}`;
    }
  }
  const parsed = parseJsonLines(text, file);
  return parsed.problems.length > 0 ? parsed.problems.map((p) => p.message).join('; ') : undefined;
}

/** The network error as people search for it: `ECONNREFUSED 127.0.0.1:9`, `ENOTFOUND host`. */
function networkError(err: unknown): string {
  const error = err as Error & { cause?: { code?: string; message?: string } };
  if (error?.name === 'TimeoutError') return `no answer within the time limit (${error.message})`;
  const cause = error?.cause;
  const detail = cause?.message ?? cause?.code;
  return detail ? `${error.message} (${detail})` : String(error?.message ?? err);
}

function otherWays(cacheDir: string): string {
  return [
    `Provide the data (folder berkeley-function-call-leaderboard/bfcl_eval/data of github.com/ShishirPatil/gorilla at commit ${BFCL_COMMIT}) in one of three other ways:`,
    '(1) pass --data DIR;',
    `(2) set ${BFCL_DIR_ENV}=DIR;`,
    `(3) copy the files into the cache folder ${cacheDir}.`,
  ].join(' ');
}

function requireFolder(dir: string, via: string, cacheDir: string): string {
  const absolute = resolve(dir);
  if (!isFolder(absolute)) {
    throw new BfclDataError(
      `${via} names ${absolute}, which is not a folder. Point it at the folder that holds BFCL_v4_*.json, or unset it to use the cache folder ${cacheDir}.`,
      { cacheDir },
    );
  }
  return absolute;
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
