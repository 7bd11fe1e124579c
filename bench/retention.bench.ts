/**
 * What finished runs leave behind on the default runtime (issue 24 item 7): the heap after 0, 10,000
 * and 100,000 finished runs, each a one-tool-call run of the reference loop's tool, run 100 at a
 * time on `createRuntime` defaults (the in-memory store with its default retention, telemetry plugin
 * without an SDK). Heap is `process.memoryUsage().heapUsed` after a full GC (`--expose-gc` is set
 * from inside). Flat means the store forgets finished runs past its bound
 * (`memoryStore({ maxFinishedRuns, finishedTtlMs })`, docs/durability.md §Stores).
 *
 *     node --import tsx bench/retention.bench.ts [--runs 100000] [--store unbounded]
 *
 * `--store unbounded` keeps every finished run (`maxFinishedRuns: Infinity`): what the default did
 * before. `benchRetention()` is also what `npm run bench` calls.
 *
 * @module
 */

import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createRuntime } from '../runtime/create-runtime.ts';
import { memoryStore } from '../stores/memory-store.ts';
import type { RunStore } from '../stores/run-store.ts';
import { addTool } from './support/reference-loop.ts';

export interface RetentionFigures {
  /** Finished runs so far. */
  runs: number;
  /** Heap used after a full GC, bytes. */
  heapBytes: number;
}

export interface RetentionOptions {
  /** Checkpoints, ascending. Default 0, 10,000, 100,000. */
  checkpoints?: number[];
  /** The store; default `createRuntime`'s own (none given). */
  store?: RunStore;
  print?: boolean;
}

function fullGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Runs finished runs up to each checkpoint and reports the heap after a full GC at each. */
export async function benchRetention(options: RetentionOptions = {}): Promise<RetentionFigures[]> {
  const checkpoints = options.checkpoints ?? [0, 10_000, 100_000];
  const gc = fullGc();
  // Each run: one call of the reference loop's tool, then a final response.
  const runtime = createRuntime({
    agent: { id: 'bench' },
    tools: [addTool],
    ...(options.store === undefined ? {} : { store: options.store }),
    planner: {
      planStart: async () => ({
        toolCalls: [{ name: 'bench.add', toolCallId: 'call-1', input: { a: 1, b: 2 } }],
      }),
      planResume: async () => ({ finalResponse: { text: 'done' } }),
    },
  });
  const figures: RetentionFigures[] = [];
  let done = 0;
  const batch = 100;
  const measure = () => {
    gc();
    gc();
    figures.push({ runs: done, heapBytes: process.memoryUsage().heapUsed });
    if (options.print ?? true) {
      const first = figures[0]!;
      const perRun =
        done === 0
          ? ''
          : `  (${((figures.at(-1)!.heapBytes - first.heapBytes) / done).toFixed(0)} B per finished run)`;
      console.log(
        `${String(done).padStart(8)} finished runs: ${(figures.at(-1)!.heapBytes / 2 ** 20).toFixed(1)} MB heap${perRun}`,
      );
    }
  };
  for (const checkpoint of checkpoints) {
    while (done < checkpoint) {
      const count = Math.min(batch, checkpoint - done);
      const runs = Array.from({ length: count }, () =>
        runtime.start({ messages: [{ role: 'user', content: 'Add 1 and 2' }] }).result(),
      );
      for (const outcome of await Promise.all(runs)) {
        if (outcome.status !== 'completed')
          throw new Error(`run ${outcome.status}: ${outcome.error?.message}`);
      }
      done += count;
    }
    measure();
  }
  await runtime.close();
  return figures;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: { runs: { type: 'string' }, store: { type: 'string' } },
  });
  const last = Number(values.runs ?? 100_000);
  const checkpoints = [0, ...[10_000, 100_000].filter((n) => n < last), last];
  const store =
    values.store === 'unbounded' ? memoryStore({ maxFinishedRuns: Number.POSITIVE_INFINITY }) : undefined;
  console.log(
    `heap after finished runs, default runtime${store ? ' (memory store keeping every finished run)' : ''}`,
  );
  await benchRetention({ checkpoints, ...(store === undefined ? {} : { store }) });
}
