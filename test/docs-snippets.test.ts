import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * Every TypeScript block in README.md, docs/*.md and the examples' READMEs (but for the
 * policy-plugin walkthrough, see below) is a complete program (issue 16 item 5):
 * all of them are type-checked together, and each one not fenced as ```ts no-run is run. They
 * import `toolwarden` and its subpaths as an app would; here those names resolve to the sources
 * (a tsconfig `paths` map built from package.json `exports`), so the blocks test the code of this
 * commit. `test/package-install.test.ts` checks the same names against the packed package.
 */

const run = promisify(execFile);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, '.toolwarden', 'snippets');

interface Snippet {
  /** `README.md:77` */
  where: string;
  file: string;
  code: string;
  runs: boolean;
}

function extractSnippets(markdownPath: string): Omit<Snippet, 'file'>[] {
  const text = readFileSync(join(root, markdownPath), 'utf8');
  const snippets: Omit<Snippet, 'file'>[] = [];
  const fence = /^```(ts|typescript)([^\n]*)\n([\s\S]*?)^```$/gm;
  for (const match of text.matchAll(fence)) {
    const line = text.slice(0, match.index).split('\n').length;
    snippets.push({ where: `${markdownPath}:${line}`, code: match[3]!, runs: !/\bno-run\b/.test(match[2]!) });
  }
  return snippets;
}

// examples/policy-plugin/README.md is left out: its blocks are excerpts of the example's files
// (write-guard.ts and its test), which `npm run typecheck` and `npx vitest` cover as files.
const documents = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
  'examples/inspection/README.md',
  'examples/tracing-in-jaeger/README.md',
];
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const snippets: Snippet[] = documents.flatMap((document) =>
  extractSnippets(document).map((snippet) => {
    const file = join(out, `${snippet.where.replace(/[/.:]/g, '_')}.ts`);
    writeFileSync(file, `// ${snippet.where}\n${snippet.code}`);
    return { ...snippet, file };
  }),
);

/** `toolwarden/x` → the source file of the `./x` export (`./dist/a/b.js` → `a/b.ts`). */
function exportPaths(): Record<string, string[]> {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { default: string }>;
  };
  const paths: Record<string, string[]> = {};
  for (const [key, target] of Object.entries(pkg.exports)) {
    if (typeof target === 'string') continue;
    const source = target.default.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts');
    paths[key === '.' ? 'toolwarden' : `toolwarden/${key.slice(2)}`] = [relative(out, join(root, source))];
  }
  return paths;
}

const tsconfig = join(out, 'tsconfig.json');
writeFileSync(
  tsconfig,
  JSON.stringify({
    extends: relative(out, join(root, 'tsconfig.json')),
    compilerOptions: { noEmit: true, paths: exportPaths(), rootDir: relative(out, root) },
    include: ['*.ts'],
  }),
);

const scratch = await mkdtemp(join(tmpdir(), 'toolwarden-snippets-'));
afterAll(() => rm(scratch, { recursive: true, force: true }));

describe('README and docs code blocks (issue 16 item 5)', () => {
  it('finds blocks in the README and in every doc that shows code', () => {
    expect(snippets.filter((snippet) => snippet.where.startsWith('README.md')).length).toBeGreaterThan(2);
    expect(new Set(snippets.map((snippet) => snippet.where.split(':')[0])).size).toBeGreaterThan(5);
  });

  it('type-checks every block as a complete program', async () => {
    const tsc = join(root, 'node_modules', '.bin', 'tsc');
    const result = await run(tsc, ['-p', tsconfig], { cwd: root }).then(
      () => '',
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );
    // Name the document and line, not the generated file.
    const named = result.replace(
      /^(\S+?)_(md)_(\d+)\.ts\((\d+),(\d+)\)/gm,
      (_, doc: string, md, line, at) =>
        `${doc.replace(/.*[\\/]/, '').replace(/_/g, '/')}.${md}:${Number(line) + Number(at) - 1}`,
    );
    expect(named).toBe('');
  }, 120_000);

  for (const snippet of snippets.filter((candidate) => candidate.runs)) {
    it(`runs ${snippet.where}`, async () => {
      // tsx by path: the block runs in a scratch directory (its files land there), outside the repo.
      const tsx = pathToFileURL(join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
      const { stdout } = await run(process.execPath, ['--import', tsx, snippet.file], {
        cwd: scratch,
        env: { ...process.env, TSX_TSCONFIG_PATH: tsconfig, NODE_NO_WARNINGS: '1' },
        timeout: 60_000,
      });
      expect(typeof stdout).toBe('string');
    }, 90_000);
  }
});
