import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FileServer, refusedUrl, startFileServer } from '../test/support/http-file-server.ts';
import {
  BFCL_COMMIT,
  BFCL_DEFAULT_BASE_URL,
  BfclDataError,
  defaultCacheDir,
  filesForCategory,
  findRepoRoot,
  resolveDataDir,
} from './data-dir.ts';
import { BFCL_CATEGORIES, loadCategory } from './load-entries.ts';
import { sharedBfclDataDir } from './shared-data-suite.ts';

// Small made-up files in BFCL's shape; never BFCL data.
const ENTRIES = `${JSON.stringify({ id: 'simple_python_0', question: [[{ role: 'user', content: 'Area of a 3-4-5 triangle?' }]], function: [] })}\n${JSON.stringify({ id: 'simple_python_1', question: [[{ role: 'user', content: 'And 5-12-13?' }]], function: [] })}\n`;
const ANSWERS = `${JSON.stringify({ id: 'simple_python_0', ground_truth: [{ area: { a: [3] } }] })}\n`;
const FILES = ['BFCL_v4_simple_python.json', 'possible_answer/BFCL_v4_simple_python.json'];

const noFetch = (() => {
  throw new Error('no download expected');
}) as unknown as typeof fetch;

describe('filesForCategory', () => {
  it('names the entries and ground-truth files of a single-turn category', () => {
    expect(filesForCategory('simple_python')).toEqual(FILES);
  });

  it('has no ground-truth file for the relevance categories', () => {
    expect(filesForCategory('live_irrelevance')).toEqual(['BFCL_v4_live_irrelevance.json']);
  });

  it('adds the API doc files a multi-turn category can involve', () => {
    expect(filesForCategory('multi_turn_miss_func')).toEqual([
      'BFCL_v4_multi_turn_miss_func.json',
      'possible_answer/BFCL_v4_multi_turn_miss_func.json',
      'multi_turn_func_doc/gorilla_file_system.json',
      'multi_turn_func_doc/math_api.json',
      'multi_turn_func_doc/message_api.json',
      'multi_turn_func_doc/posting_api.json',
      'multi_turn_func_doc/ticket_api.json',
      'multi_turn_func_doc/trading_bot.json',
      'multi_turn_func_doc/travel_booking.json',
      'multi_turn_func_doc/vehicle_control.json',
    ]);
    expect(filesForCategory('memory', { memoryBackend: 'vector' })).toContain(
      'multi_turn_func_doc/memory_vector.json',
    );
    expect(filesForCategory('web_search')).toContain('multi_turn_func_doc/web_search.json');
  });
});

describe('where the data comes from', () => {
  let root: string;
  let repo: string;
  let cache: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'toolwarden-data-'));
    repo = join(root, 'main');
    cache = join(root, 'cache', 'toolwarden', 'bfcl');
    await mkdir(repo, { recursive: true });
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('prefers --data DIR over the environment, the repo and the cache', async () => {
    const explicit = join(root, 'explicit');
    await mkdir(explicit);

    const resolved = await resolveDataDir({
      dir: explicit,
      env: { TOOLWARDEN_BFCL_DIR: join(root, 'elsewhere') },
      repoRoot: repo,
      cacheDir: cache,
      fetch: noFetch,
    });

    expect(resolved).toEqual({ dir: explicit, source: 'option', downloaded: [] });
  });

  it('uses TOOLWARDEN_BFCL_DIR when no --data is given', async () => {
    const fromEnv = join(root, 'from-env');
    await mkdir(fromEnv);

    const resolved = await resolveDataDir({
      env: { TOOLWARDEN_BFCL_DIR: fromEnv },
      repoRoot: repo,
      fetch: noFetch,
    });

    expect(resolved).toMatchObject({ dir: fromEnv, source: 'env' });
  });

  it('says which setting names a folder that does not exist', async () => {
    const missing = join(root, 'nope');

    await expect(resolveDataDir({ dir: missing, cacheDir: cache })).rejects.toThrowError(
      `--data names ${missing}, which is not a folder.`,
    );
    await expect(
      resolveDataDir({ env: { TOOLWARDEN_BFCL_DIR: missing }, cacheDir: cache }),
    ).rejects.toThrowError(`TOOLWARDEN_BFCL_DIR names ${missing}, which is not a folder.`);
  });

  it('uses <repo root>/../shared/data/bfcl when it exists', async () => {
    const shared = join(root, 'shared', 'data', 'bfcl');
    await mkdir(shared, { recursive: true });

    const resolved = await resolveDataDir({ env: {}, repoRoot: repo, cacheDir: cache, fetch: noFetch });

    expect(resolved).toEqual({ dir: shared, source: 'repo', downloaded: [] });
  });

  it('uses the cache when it holds every file the command needs', async () => {
    await mkdir(join(cache, 'possible_answer'), { recursive: true });
    for (const file of FILES) await writeFile(join(cache, file), ENTRIES);

    const resolved = await resolveDataDir({
      files: FILES,
      env: {},
      repoRoot: repo,
      cacheDir: cache,
      fetch: noFetch,
    });

    expect(resolved).toEqual({ dir: cache, source: 'cache', downloaded: [] });
  });

  it('finds the repo root from its own module, not the working directory', () => {
    const expected = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');

    expect(findRepoRoot()).toBe(expected);
    expect(findRepoRoot(root)).toBeUndefined();
  });

  it('puts the cache under $XDG_CACHE_HOME when it is absolute, else under ~/.cache', () => {
    expect(defaultCacheDir({ XDG_CACHE_HOME: '/var/cache/me' })).toBe('/var/cache/me/toolwarden/bfcl');
    expect(defaultCacheDir({ XDG_CACHE_HOME: 'relative/cache' })).toBe(
      join(homedir(), '.cache', 'toolwarden', 'bfcl'),
    );
    expect(defaultCacheDir({})).toBe(join(homedir(), '.cache', 'toolwarden', 'bfcl'));
  });

  it('downloads from the pinned gorilla commit by default', () => {
    expect(BFCL_DEFAULT_BASE_URL).toBe(
      `https://raw.githubusercontent.com/ShishirPatil/gorilla/${BFCL_COMMIT}/berkeley-function-call-leaderboard/bfcl_eval/data`,
    );
    expect(BFCL_COMMIT).toBe('6ea57973c7a6097fd7c5915698c54c17c5b1b6c8');
  });
});

describe('downloading into the cache from a local HTTP server', () => {
  let server: FileServer;
  let root: string;
  let repo: string;
  let cache: string;
  beforeAll(async () => {
    server = await startFileServer({
      '/data/BFCL_v4_simple_python.json': ENTRIES,
      '/data/possible_answer/BFCL_v4_simple_python.json': ANSWERS,
      '/data/BFCL_v4_multiple.json': `${JSON.stringify({ id: 'multiple_0' })}\n{"id": "multiple_1", "question": [\n`,
      '/data/possible_answer/BFCL_v4_multiple.json': ANSWERS,
      '/data/BFCL_v4_parallel.json': '',
      '/data/BFCL_v4_live_simple.json': { status: 503, body: 'try later' },
    });
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'toolwarden-download-'));
    repo = join(root, 'main');
    cache = join(root, 'cache');
    server.requests.length = 0;
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const options = (extra: Partial<Parameters<typeof resolveDataDir>[0]> = {}) => ({
    env: {},
    repoRoot: repo,
    cacheDir: cache,
    baseUrl: `${server.url}/data`,
    progress: false,
    ...extra,
  });

  it('fetches only the files the command needs, then serves them from the cache', async () => {
    const first = await resolveDataDir(options({ files: FILES }));
    const requestsAfterFirst = [...server.requests];
    const second = await resolveDataDir(options({ files: FILES }));

    expect(first).toEqual({ dir: cache, source: 'download', downloaded: FILES });
    expect(requestsAfterFirst.sort()).toEqual([
      '/data/BFCL_v4_simple_python.json',
      '/data/possible_answer/BFCL_v4_simple_python.json',
    ]);
    expect(await readFile(join(cache, 'BFCL_v4_simple_python.json'), 'utf8')).toBe(ENTRIES);
    expect(await readFile(join(cache, 'possible_answer', 'BFCL_v4_simple_python.json'), 'utf8')).toBe(
      ANSWERS,
    );
    expect(second.source).toBe('cache');
    expect(server.requests).toEqual(requestsAfterFirst);
    expect((await readdir(cache)).sort()).toEqual(['BFCL_v4_simple_python.json', 'possible_answer']); // no temp files
  });

  it('fetches just the missing files when the cache holds some', async () => {
    await mkdir(cache, { recursive: true });
    await writeFile(join(cache, 'BFCL_v4_simple_python.json'), ENTRIES);

    const resolved = await resolveDataDir(options({ files: FILES }));

    expect(resolved.downloaded).toEqual(['possible_answer/BFCL_v4_simple_python.json']);
    expect(server.requests).toEqual(['/data/possible_answer/BFCL_v4_simple_python.json']);
  });

  it('takes the base URL from TOOLWARDEN_BFCL_BASE_URL', async () => {
    const resolved = await resolveDataDir({
      ...options({ files: FILES }),
      baseUrl: undefined,
      env: { TOOLWARDEN_BFCL_BASE_URL: `${server.url}/data/` },
    });

    expect(resolved.source).toBe('download');
    expect(server.requests).toHaveLength(2);
  });

  it('names the URL, the HTTP status and the three other ways for a 404, and leaves nothing behind', async () => {
    const url = `${server.url}/data/BFCL_v4_irrelevance.json`;

    const error = await resolveDataDir(options({ files: ['BFCL_v4_irrelevance.json'] })).catch(
      (err: unknown) => err,
    );

    expect(error).toBeInstanceOf(BfclDataError);
    expect((error as BfclDataError).details).toMatchObject({ url, status: 404 });
    expect((error as Error).message).toBe(
      `Could not download the BFCL data file ${url}: HTTP 404 Not Found. Provide the data (folder berkeley-function-call-leaderboard/bfcl_eval/data of github.com/ShishirPatil/gorilla at commit ${BFCL_COMMIT}) in one of three other ways: (1) pass --data DIR; (2) set TOOLWARDEN_BFCL_DIR=DIR; (3) copy the files into the cache folder ${cache}.`,
    );
    expect(await readdir(cache).catch(() => [])).toEqual([]);
  });

  it('reports a 503 the same way, with its status', async () => {
    await expect(resolveDataDir(options({ files: ['BFCL_v4_live_simple.json'] }))).rejects.toThrowError(
      /BFCL_v4_live_simple\.json: HTTP 503 Service Unavailable\. Provide the data/,
    );
  });

  it('names the URL and the network error when the server is down', async () => {
    const down = await refusedUrl();
    const url = `${down}/BFCL_v4_simple_python.json`;

    const error = await resolveDataDir(options({ files: FILES, baseUrl: down })).catch((err: unknown) => err);

    expect(error).toBeInstanceOf(BfclDataError);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^Could not download the BFCL data file ${url.replace(/[.]/g, '\\.')}: fetch failed \\(connect ECONNREFUSED 127\\.0\\.0\\.1:\\d+\\)\\. Provide the data`,
      ),
    );
    expect((error as Error).message).toContain(
      '(1) pass --data DIR; (2) set TOOLWARDEN_BFCL_DIR=DIR; (3) copy the files into the cache folder',
    );
    expect(await readdir(cache).catch(() => [])).toEqual([]);
  });

  it('refuses a downloaded file that is not JSON Lines, and writes nothing', async () => {
    const error = await resolveDataDir(options({ files: ['BFCL_v4_multiple.json'] })).catch(
      (err: unknown) => err,
    );

    expect((error as Error).message).toMatch(
      /BFCL_v4_multiple\.json is unusable: BFCL_v4_multiple\.json:2: not JSON: /,
    );
    expect(await readdir(cache).catch(() => [])).toEqual([]);
  });

  it('refuses an empty downloaded file', async () => {
    await expect(resolveDataDir(options({ files: ['BFCL_v4_parallel.json'] }))).rejects.toThrowError(
      /BFCL_v4_parallel\.json is unusable: it is empty/,
    );
  });

  it('draws a progress bar on stderr when asked, even when stderr is not a terminal', async () => {
    const stderr = new PassThrough();
    let output = '';
    stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });

    await resolveDataDir(options({ files: FILES, progress: true, stderr }));

    expect(output).toContain('BFCL data');
    expect(output).toContain('2/2 files');
  });

  it('draws nothing by default when stderr is not a terminal', async () => {
    const stderr = new PassThrough();
    let output = '';
    stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });

    await resolveDataDir(options({ files: FILES, progress: undefined, stderr }));

    expect(output).toBe('');
  });
});

const dataDir = sharedBfclDataDir('bfcl/data-dir (files each real category reads)');

describe.skipIf(!dataDir)('filesForCategory against the real data', () => {
  it.each([...BFCL_CATEGORIES])('names every file loadCategory(%s) reads', async (category) => {
    const { files } = await loadCategory(dataDir!, category);

    expect(filesForCategory(category)).toEqual(expect.arrayContaining(files));
  });
});
