import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Message } from '../run/message.ts';
import type { RunEvent } from '../run/run-events.ts';
import { sqliteStore } from '../stores/sqlite-store.ts';
import type { ChildConfig, ResumeReport } from './support/durable-child.ts';
import { readJsonLines, spawnWorker, waitForLine } from './support/worker-output.ts';

/**
 * Crash safety (issue 7, docs/durability.md): worker processes running the same multi-step run on one
 * SQLite file are killed with SIGKILL at each step boundary in turn, and once in the middle of a
 * tool call; a fresh process then resumes every run to completion. See
 * `support/durable-child.ts` for the run and the idempotent ledger tool.
 */

const CHILD = join(import.meta.dirname, 'support', 'durable-child.ts');

/**
 * Where each worker is killed: the nth stored snapshot of a state, or inside a tool call. Every
 * state the run stands in across a macrotask is one; `validating` and `resuming`, whose policy
 * consultations answer at once here, are written together with the next state
 * (docs/durability.md §Step boundaries).
 */
const KILL_POINTS: { label: string; killAt: ChildConfig['killAt']; storedState: string }[] = [
  { label: 'planning', killAt: { state: 'planning', nth: 2 }, storedState: '"planning"' },
  { label: 'executing', killAt: { state: 'executing', nth: 2 }, storedState: '"executing"' },
  {
    label: 'awaiting',
    killAt: { state: 'awaiting.clarification', nth: 1 },
    storedState: '{"awaiting":"clarification"}',
  },
  { label: 'finalizing', killAt: { state: 'finalizing', nth: 1 }, storedState: '"finalizing"' },
  { label: 'completed', killAt: { state: 'completed', nth: 1 }, storedState: '"completed"' },
  { label: 'mid-tool', killAt: 'mid-tool', storedState: '"executing"' },
];

const worker = (config: ChildConfig) => spawnWorker(CHILD, config);

interface Ledger {
  runId: string;
  toolCallId: string;
  amount: number;
}

describe('kill -9 at every step boundary, then a fresh process resumes every run', () => {
  let dir: string;
  let db: string;
  const killedIn = new Map<string, string>();
  const signals = new Map<string, unknown>();
  let report: ResumeReport;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwarden-crash-'));
    db = join(dir, 'runs.db');
    // One worker per kill point, all at once, each with its own run in the same database file.
    await Promise.all(
      KILL_POINTS.map(async ({ label, killAt }) => {
        const { child, lines, exited } = worker({ mode: 'start', db, dir, runId: `run-${label}`, killAt });
        await waitForLine(lines, /^FROZEN /, exited);
        child.kill('SIGKILL');
        signals.set(label, await exited);
      }),
    );
    // What the store held at the moment of each kill.
    const store = sqliteStore({ path: db });
    for (const { label } of KILL_POINTS) {
      const stored = await store.load(`run-${label}`);
      killedIn.set(label, JSON.stringify((stored!.snapshot as { value: unknown }).value));
    }
    await store.close();

    const resumer = worker({ mode: 'resume-all', db, dir });
    const line = await waitForLine(resumer.lines, /^\{"outcomes"/, resumer.exited, 60_000);
    report = JSON.parse(line) as ResumeReport;
    expect(await resumer.exited).toBe(0);
  }, 120_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('killed each worker with SIGKILL right where the store says it stood', () => {
    for (const { label, storedState } of KILL_POINTS) {
      expect(signals.get(label), label).toBe('SIGKILL');
      expect(killedIn.get(label), label).toBe(storedState);
    }
  });

  it('resumed every unfinished run to completion in the fresh process', async () => {
    const unfinished = KILL_POINTS.filter(({ label }) => label !== 'completed').map(
      ({ label }) => `run-${label}`,
    );
    expect(report.outcomes.map((outcome) => outcome.runId).sort()).toEqual(unfinished.sort());
    for (const outcome of report.outcomes) expect(outcome.status, outcome.runId).toBe('completed');
    const store = sqliteStore({ path: db });
    try {
      for (const { label } of KILL_POINTS) {
        expect((await store.load(`run-${label}`))?.status, label).toBe('completed');
      }
    } finally {
      await store.close();
    }
  });

  it('lost no tool result: every call in every transcript has exactly one tool message', async () => {
    const store = sqliteStore({ path: db });
    try {
      for (const { label } of KILL_POINTS) {
        const stored = await store.load(`run-${label}`);
        const messages = (stored!.snapshot as { context: { messages: Message[] } }).context.messages;
        const called = messages.flatMap((message) =>
          message.role === 'assistant' ? (message.toolCalls ?? []).map((call) => call.toolCallId) : [],
        );
        const answered = messages.flatMap((message) => (message.role === 'tool' ? [message.toolCallId] : []));
        expect(called, label).toEqual([
          `run-${label}:t1:c1`,
          `run-${label}:t2:c1`,
          `run-${label}:t2:c2`,
          `run-${label}:t4:c1`,
        ]);
        expect(answered, label).toEqual(called);
        expect(messages.at(-1), label).toEqual({ role: 'assistant', content: 'Booked 100 in total.' });
      }
    } finally {
      await store.close();
    }
  });

  it('applied each toolCallId once on the ledger, though the call in flight at the kill ran twice', () => {
    const ledger = readJsonLines<Ledger>(join(dir, 'ledger.jsonl'));
    const attempts = readJsonLines<{ toolCallId: string; pid: number }>(join(dir, 'attempts.jsonl'));
    const ids = ledger.map((entry) => entry.toolCallId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ledger).toHaveLength(KILL_POINTS.length * 4);
    for (const { label } of KILL_POINTS) {
      const booked = ledger.filter((entry) => entry.runId === `run-${label}`);
      expect(
        booked.reduce((sum, entry) => sum + entry.amount, 0),
        label,
      ).toBe(100);
    }
    const midTool = attempts.filter((attempt) => attempt.toolCallId === 'run-mid-tool:t2:c1');
    expect(midTool).toHaveLength(2);
    expect(new Set(midTool.map((attempt) => attempt.pid)).size).toBe(2); // once per process
  });

  it('continued each run’s event log: numbered without gaps, one start, one completion, resumption marked', async () => {
    const store = sqliteStore({ path: db });
    try {
      for (const { label } of KILL_POINTS) {
        const log = await store.readEvents(`run-${label}`);
        const events = log.map((record) => record.event as RunEvent);
        expect(
          log.map((record) => record.seq),
          label,
        ).toEqual(log.map((_, index) => index + 1));
        expect(
          events.filter((event) => event.type === 'run_started'),
          label,
        ).toHaveLength(1);
        expect(
          events.filter((event) => event.type === 'run_completed'),
          label,
        ).toHaveLength(1);
        const results = events.flatMap((event) =>
          event.type === 'tool_result' ? [event.result.toolCallId] : [],
        );
        expect(new Set(results).size, label).toBe(4);
        // A resume is marked by run_resumed; the state it was saved in is not logged again.
        expect(
          events.filter((event) => event.type === 'state_changed' && event.previous === undefined),
          label,
        ).toHaveLength(1);
        const resumptions = events.filter((event) => event.type === 'run_resumed');
        expect(resumptions.length, label).toBe(label === 'completed' ? 0 : 1);
      }
    } finally {
      await store.close();
    }
  });
});
