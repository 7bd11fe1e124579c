/**
 * What the Temporal kill suites share (test/temporal-recovery.integration.test.ts,
 * test/temporal-in-doubt.integration.test.ts): a client, a folder, a workflow bundle built once
 * (each worker loads it instead of running webpack at its start), and the worker processes to
 * kill at the end. Call it inside `describe`: it registers the suite's `beforeAll` / `afterAll`.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll } from 'vitest';
import { writeWorkflowBundle } from '../../temporal/index.ts';
import { connectTemporal } from './temporal-server.ts';

export interface TemporalKillSetup {
  children: ChildProcess[];
  temporal: Awaited<ReturnType<typeof connectTemporal>>;
  client: Client;
  dir: string;
  bundlePath: string;
}

export function temporalKillSetup(available: boolean, prefix: string): TemporalKillSetup {
  const setup = { children: [] as ChildProcess[] } as TemporalKillSetup;
  beforeAll(async () => {
    setup.temporal = await connectTemporal(available);
    setup.client = setup.temporal.client;
    setup.dir = await mkdtemp(join(tmpdir(), prefix));
    ({ codePath: setup.bundlePath } = await writeWorkflowBundle(join(setup.dir, 'workflows.js')));
  }, 120_000);
  afterAll(async () => {
    for (const child of setup.children) child.kill('SIGKILL');
    await setup.temporal?.close();
    if (setup.dir) await rm(setup.dir, { recursive: true, force: true });
  });
  return setup;
}
