import { availableParallelism } from 'node:os';
import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.ts';

/**
 * `npm run test:unit`: every test that needs no peer and starts no process (README, Quick start). The
 * full suite (`npm test`) runs these and the files below. A test that starts a process fails in
 * the unit run (`test/support/no-subprocess.ts`); `TOOLWARDEN_TEST_PEERS=off` makes the suites
 * that probe a peer (PostgreSQL in the durable suites) or read the real BFCL data skip them, saying so.
 */
export const SLOW_OR_OUTSIDE = [
  // Peers: PostgreSQL, Jaeger, Temporal, the llama.cpp server, Chromium.
  '**/*.integration.test.ts',
  '**/*.e2e.test.ts',
  'test/inspector-e2e.test.ts',
  'stores/postgres-store.test.ts',
  // Subprocesses: workers killed with SIGKILL, CLIs, npm pack/install, git, tsc.
  'test/check-structure.test.ts',
  'stores/sqlite-store.test.ts',
  'test/bfcl-eval-cli.test.ts',
  'test/docs-references.test.ts',
  'test/docs-snippets.test.ts',
  'test/durable-crash.test.ts',
  'test/cost-ledger-processes.test.ts',
  'test/durable-embedding.test.ts',
  'test/durable-recover.test.ts',
  'test/batch-rows-kill.test.ts',
  'test/reliability/effects-kill.test.ts',
  'test/mcp-cli.test.ts',
  'test/mcp-gateway.test.ts',
  'test/package-install.test.ts',
  'test/package-ai-sdk.test.ts',
  'test/mcp-inspector-cli.test.ts',
  'test/telemetry-jaeger-script.test.ts',
  'test/package-lock.test.ts',
  'test/dts-size.test.ts',
  // esbuild runs its binary as a subprocess.
  'test/inspector-page-bundle.test.ts',
  'test/mcp-client.test.ts',
  'test/mcp-hostile.test.ts',
  'test/mcp-elicitation.test.ts',
  // V8's map check needs a process started with --allow-natives-syntax.
  'test/tool-result-shapes.test.ts',
  // Slow by design: event-loop timing under load, the inspect command's demo agent end to end,
  // 100 runs of 30 calls behind the inspector (3 s of CPU).
  'test/reliability/event-loop.test.ts',
  'test/inspector-commands.test.ts',
  'test/inspector-load.test.ts',
];

export default mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: SLOW_OR_OUTSIDE,
      // Files share their workers' module cache: with a fresh one per file, importing took 103 s of
      // the files' summed time (14 s shared) and the run 72 s of CPU (22 s shared). A test that
      // needs fresh module state resets it itself, or belongs in the list above.
      isolate: false,
      // Most of a unit file's time is a real timer running out (a time budget, a backoff, a lease),
      // not CPU: with vitest's default on 2 cores (one worker) the files waited in turn. Four
      // workers overlap the waits: 63-75 s -> 46-49 s at load 11-13 (README, Quick start).
      maxWorkers: Math.max(4, availableParallelism()),
      setupFiles: ['test/support/no-subprocess.ts'],
      env: { TOOLWARDEN_TEST_PEERS: 'off' },
    },
  }),
);
