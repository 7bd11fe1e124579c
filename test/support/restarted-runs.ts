/**
 * The traced runs of `traced-resume-child.ts` across a process restart, for the suites that read
 * them back from Jaeger (`telemetry-resume-link.integration.test.ts`, the Jaeger UI one): a first
 * worker runs them to the kill point and is killed with SIGKILL, a second one (same owner) finishes
 * them. Both export to `otlpEndpoint`.
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TracedResumeConfig } from './traced-resume-child.ts';
import { spawnWorker, waitForLine } from './worker-output.ts';

const CHILD = join(import.meta.dirname, 'traced-resume-child.ts');

export interface RestartedRuns {
  config: Omit<TracedResumeConfig, 'mode'>;
  /** The trace of the run killed while it awaited `q2`, and of the run killed inside a tool call. */
  traceIds: { awaiting: string; midTool: string };
  /** How the first worker ended (`SIGKILL`). */
  killedBy: unknown;
  /** Removes the SQLite file's folder. */
  dispose(): void;
}

/**
 * Runs both workers. @throws when a worker fails or prints something else than expected (the
 * second must finish both runs `completed`).
 */
export async function runAcrossRestart(otlpEndpoint: string): Promise<RestartedRuns> {
  const dir = mkdtempSync(join(tmpdir(), 'toolwarden-resume-link-'));
  const suffix = randomUUID().slice(0, 8);
  const config: Omit<TracedResumeConfig, 'mode'> = {
    db: join(dir, 'runs.db'),
    runIds: { awaiting: `run-awaiting-${suffix}`, midTool: `run-mid-tool-${suffix}` },
    owner: 'pod-a',
    serviceName: `toolwarden-restart-${suffix}`,
    otlpEndpoint,
  };
  const dispose = () => rmSync(dir, { recursive: true, force: true });
  try {
    const first = spawnWorker(CHILD, { ...config, mode: 'start' });
    const line = await waitForLine(first.lines, /^READY [0-9a-f]{32} [0-9a-f]{32}$/, first.exited);
    first.child.kill('SIGKILL');
    const killedBy = await first.exited;
    const [, awaiting, midTool] = line.split(' ') as [string, string, string];

    const second = spawnWorker(CHILD, { ...config, mode: 'resume' });
    const done = await waitForLine(second.lines, /^DONE /, second.exited);
    const code = await second.exited;
    if (done !== 'DONE completed completed' || code !== 0) {
      throw new Error(`the resuming worker printed "${done}" and exited ${String(code)}`);
    }
    return { config, traceIds: { awaiting, midTool }, killedBy, dispose };
  } catch (error) {
    dispose();
    throw error;
  }
}
