import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * A new app on today's AI SDK installs toolwarden beside it (issue 39 item 1): the packed package
 * and the AI SDK 7 set (`ai@7 @ai-sdk/provider@4 @ai-sdk/openai-compatible@3 zod`), or the AI SDK 6
 * set, with a plain `npm install` (no `--legacy-peer-deps`, no `--force`), no install-scripts or
 * peer warning, one copy of `@ai-sdk/provider`; a `modelPlanner` over the AI SDK's own mock model
 * of that major type-checks under strict `tsc --noEmit` (library declarations checked too) and
 * completes a run with a refused call, its repair and a final answer.
 *
 * `.ci/run` runs this file on Node 24 and again on Node 22; each run installs both sets. Locally
 * it skips, saying so, when npm cannot reach a registry; with CI=true it is required.
 */

const exec = promisify(execFile);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SUITE = 'package beside the AI SDK (test/package-ai-sdk.test.ts)';
const required = process.env.CI === 'true';
const work = mkdtempSync(join(tmpdir(), 'toolwarden-ai-sdk-'));
let tarball = '';

const sets = [
  {
    name: 'AI SDK 7',
    packages: ['ai@7', '@ai-sdk/provider@4', '@ai-sdk/openai-compatible@3', 'zod'],
    mock: 'MockLanguageModelV4',
    spec: 'v4',
    provider: 4,
  },
  {
    name: 'AI SDK 6',
    packages: ['ai@6', '@ai-sdk/provider@3', '@ai-sdk/openai-compatible@2', 'zod'],
    mock: 'MockLanguageModelV3',
    spec: 'v3',
    provider: 3,
  },
] as const;

const npm = (args: string[], cwd: string) =>
  exec('npm', [...args, '--no-audit', '--no-fund'], { cwd, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 });
const node = (args: string[], cwd: string) =>
  exec(process.execPath, args, { cwd, timeout: 120_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code ?? 1,
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? '',
    }),
  );

/** The app's agent: the mock model of its major, a real provider's model beside it (typed, not called). */
const agent = (mock: string) => `
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { ${mock} } from 'ai/test';
import { z } from 'zod';
import { createRuntime, defineTool, restrictOnInvalidArguments } from 'toolwarden';
import { modelPlanner } from 'toolwarden/models';

const upsert = defineTool({
  id: 'crm.upsert_profile',
  description: 'Create or update a customer profile',
  input: z.object({ email: z.email(), plan: z.enum(['free', 'pro']) }),
  execute: async ({ email, plan }) => ({ id: 'cus_' + email, plan }),
});
const call = (input: string) => ({ type: 'tool-call' as const, toolCallId: 'call_0', toolName: 'crm__upsert_profile', input });
const turns = [
  [call('{"email":"ada@example.com","plan":"PRO"}')],
  [call('{"email":"ada@example.com","plan":"pro"}')],
  [{ type: 'text' as const, text: 'Ada is on pro.' }],
];
const model = new ${mock}({
  doGenerate: async () => {
    const content = turns.shift() ?? [];
    return {
      content,
      finishReason: { unified: content[0]?.type === 'tool-call' ? 'tool-calls' : 'stop', raw: undefined },
      usage: {
        inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: 5, text: 5, reasoning: undefined },
      },
      warnings: [],
    };
  },
});
const served = createOpenAICompatible({ name: 'local', baseURL: 'http://127.0.0.1:1/v1' }).chatModel('m');
void modelPlanner({ model: served });
// The option is typed, not any: something that is not a language model is refused (at run time too).
// @ts-expect-error
const refused = () => modelPlanner({ model: { specificationVersion: 'v1', provider: 'p', modelId: 'm' } });
void refused;
const runtime = createRuntime({
  agent: { id: 'support' },
  tools: [upsert],
  planner: modelPlanner({ model, system: 'You manage CRM profiles.' }),
  policies: [restrictOnInvalidArguments({ maxRetries: 2 })],
});
const outcome = await runtime.start({ messages: [{ role: 'user', content: 'Add ada@example.com as pro' }] }).result();
await runtime.close();
console.log(JSON.stringify({
  spec: model.specificationVersion,
  servedSpec: served.specificationVersion,
  status: outcome.status,
  hints: outcome.toolResults.map((result) => result.retryHint?.reason ?? null),
  result: outcome.toolResults.at(-1)?.result,
  text: outcome.finalResponse?.text,
  usage: outcome.usage,
}));
`;

const TSCONFIG = JSON.stringify({
  compilerOptions: {
    target: 'ES2022',
    module: 'Node16',
    moduleResolution: 'node16',
    strict: true,
    noEmit: true,
    // toolwarden's declarations are checked as well: they must load with @ai-sdk/provider 3 and 4.
    skipLibCheck: false,
    types: ['node'],
    lib: ['ES2023', 'DOM'],
  },
  files: ['agent.ts'],
});

const installs = new Map<string, { stdout: string; stderr: string } | { skipped: string }>();

beforeAll(async () => {
  // `npm pack` builds dist/ through prepack.
  await npm(['pack', '--pack-destination', work], root);
  tarball = join(work, readdirSync(work).find((name) => name.endsWith('.tgz'))!);
  await Promise.all(
    sets.map(async (set) => {
      const app = join(work, set.name.replace(/\W+/g, '-'));
      mkdirSync(app);
      writeFileSync(
        join(app, 'package.json'),
        JSON.stringify({ name: 'app', private: true, type: 'module' }),
      );
      try {
        // Exactly the command a user runs: no --legacy-peer-deps, no --force.
        const installed = await npm(['install', '--prefer-offline', tarball, ...set.packages], app);
        // What a TypeScript app has beside it (the AI SDK's declarations use Node's and JSON Schema's types).
        await npm(['install', '--prefer-offline', '-D', '@types/node@24', '@types/json-schema'], app);
        installs.set(set.name, installed);
      } catch (error) {
        if (required) throw error;
        const skipped = `npm could not install (no registry or cache?): ${String(error).slice(0, 300)}`;
        console.warn(`[${SUITE}] ${set.name} skipped: ${skipped}; with CI=true this suite fails instead.`);
        installs.set(set.name, { skipped });
      }
      writeFileSync(join(app, 'agent.ts'), agent(set.mock));
      writeFileSync(join(app, 'tsconfig.json'), TSCONFIG);
    }),
  );
}, 600_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe.each(sets)(`${SUITE}: $name on Node ${process.versions.node}`, (set) => {
  const app = () => join(work, set.name.replace(/\W+/g, '-'));
  const install = () => {
    const result = installs.get(set.name);
    return result && 'stdout' in result ? result : undefined;
  };

  it(`npm install <tarball> ${set.packages.join(' ')} succeeds plainly: no install-scripts or peer warning, one provider`, (context) => {
    const installed = install();
    if (!installed) return context.skip();
    const output = installed.stdout + installed.stderr;
    expect(output).not.toMatch(/install-scripts|ERESOLVE|peer dep|overriding peer|EBADENGINE/i);
    expect(output).toMatch(/added \d+ packages/);
    const providers = readdirSync(app(), { recursive: true, encoding: 'utf8' }).filter((file) =>
      file.endsWith(join('node_modules', '@ai-sdk', 'provider', 'package.json')),
    );
    expect(providers).toEqual([join('node_modules', '@ai-sdk', 'provider', 'package.json')]);
    const version = JSON.parse(readFileSync(join(app(), providers[0]!), 'utf8')).version as string;
    expect(Number(version.split('.')[0])).toBe(set.provider);
    const manifest = JSON.parse(
      readFileSync(join(app(), 'node_modules', 'toolwarden', 'package.json'), 'utf8'),
    ) as { scripts?: Record<string, string> };
    expect(manifest.scripts?.prepare).toBeUndefined();
  });

  it(`a modelPlanner over ${set.mock} type-checks under strict tsc --noEmit, library declarations included`, async (context) => {
    if (!install()) return context.skip();
    const checked = await node([join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], app());
    expect(checked.stdout + checked.stderr).toBe('');
    expect(checked.code).toBe(0);
  }, 120_000);

  it('completes a run with a refused call, its repair and a final answer', async (context) => {
    if (!install()) return context.skip();
    const tsx = pathToFileURL(join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
    const ran = await node(['--import', tsx, 'agent.ts'], app());
    expect(ran.stderr).toBe('');
    expect(JSON.parse(ran.stdout)).toEqual({
      spec: set.spec,
      servedSpec: set.spec,
      status: 'completed',
      hints: ['invalid_arguments', null],
      result: { id: 'cus_ada@example.com', plan: 'pro' },
      text: 'Ada is on pro.',
      usage: { inputTokens: 30, outputTokens: 15, totalTokens: 45 },
    });
  }, 120_000);
});
