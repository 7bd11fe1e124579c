import { afterEach, describe, expect, it } from 'vitest';
import { SNAPSHOT_FORMAT, SNAPSHOT_FORMAT_KEY } from '../machines/snapshot-format.ts';
import { createRuntime, type Runtime } from '../runtime/create-runtime.ts';
import { SnapshotFormatTooNewError } from '../runtime/durable/snapshot-migration.ts';
import type { RunStore } from '../stores/run-store.ts';
import {
  createLedger,
  FIXTURE_AGENT,
  FIXTURE_RUNS,
  FIXTURE_TIME_BUDGET_MS,
  fixturePlanner,
  fixtureTools,
  type Ledger,
} from './fixtures/releases/scenario.ts';
import { fixtureReleases, fixtureStoreKinds, type OpenedFixture } from './support/release-fixtures.ts';

/**
 * Upgrades with runs in flight (issue 36 item 1, docs/durability.md §Upgrades): every earlier
 * release's fixture databases (test/fixtures/releases/<version>/, made by that release's code)
 * are restored with this release's code, and every run in them finishes with the tool effects it
 * was on its way to.
 */

const kinds = await fixtureStoreKinds('release fixtures (PostgreSQL)');
const releases = fixtureReleases();
const opened: OpenedFixture[] = [];
const runtimes: Runtime[] = [];

afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
  await Promise.all(opened.splice(0).map((fixture) => fixture.dispose()));
});

function upgradedRuntime(store: RunStore, ledger: Ledger, errors: unknown[] = []): Runtime {
  const runtime = createRuntime({
    agent: FIXTURE_AGENT,
    telemetry: false,
    store,
    tools: fixtureTools(ledger),
    planner: fixturePlanner(),
    caps: { timeBudgetMs: FIXTURE_TIME_BUDGET_MS },
    durable: { owner: 'upgraded-release' },
    onError: (error) => errors.push(error),
  });
  runtimes.push(runtime);
  return runtime;
}

it('has the fixtures of release 0.1.0 at least', () => {
  expect(releases).toContain('0.1.0');
});

describe.each(kinds)('release fixtures on $name', (kind) => {
  it.skipIf(kind.skip !== undefined).each(releases)(
    'restores every run release %s left in the store and completes it with its tool effects',
    async (release) => {
      kind.require();
      const fixture = await kind.open(release);
      opened.push(fixture);
      const ledger = createLedger();
      const runtime = upgradedRuntime(fixture.store, ledger);

      // What the store says before anything is restored: each run where the old release left it.
      const listed = new Map((await runtime.list()).map((run) => [run.runId, run]));
      expect(listed.get(FIXTURE_RUNS.clarification.runId)?.awaiting).toMatchObject({
        kind: 'clarification',
        id: 'which-plan',
      });
      const confirmation = listed.get(FIXTURE_RUNS.confirmation.runId)?.awaiting;
      expect(confirmation).toMatchObject({
        kind: 'confirmation',
        toolCallIds: ['fixture-confirmation:t1:c1'],
      });
      const external = listed.get(FIXTURE_RUNS.external.runId)?.awaiting;
      expect(external).toMatchObject({ kind: 'external_tools' });
      expect(listed.get(FIXTURE_RUNS.midstep.runId)).toMatchObject({ status: 'running', awaiting: null });

      // The mid-step run goes on by itself; the others with their answers, by id.
      const recovered = await runtime.recover();
      expect(recovered.recovered.map((run) => run.runId)).toEqual([FIXTURE_RUNS.midstep.runId]);
      const clarified = await runtime.provideClarification(FIXTURE_RUNS.clarification.runId, {
        id: 'which-plan',
        answer: 'pro',
      });
      const confirmed = await runtime.confirm(FIXTURE_RUNS.confirmation.runId, {
        id: (confirmation as { id: string }).id,
        approved: true,
        by: 'ops@example.com',
      });
      const sent = await runtime.provideToolResults(FIXTURE_RUNS.external.runId, [
        {
          toolCallId: (external as { calls: { toolCallId: string }[] }).calls[0]!.toolCallId,
          result: { sent: true },
        },
      ]);

      const outcomes = await Promise.all(
        [clarified, confirmed, sent, recovered.recovered[0]!].map((run) => run.result()),
      );
      for (const outcome of outcomes) expect(outcome, outcome.runId).toMatchObject({ status: 'completed' });
      expect(outcomes.map((outcome) => outcome.finalResponse?.text)).toEqual([
        `Done: ${FIXTURE_RUNS.clarification.prompt}`,
        `Done: ${FIXTURE_RUNS.confirmation.prompt}`,
        `Done: ${FIXTURE_RUNS.external.prompt}`,
        `Done: ${FIXTURE_RUNS.midstep.prompt}`,
      ]);
      // The effects, each once, under the idempotency key the old release gave the call.
      expect([...ledger.upserts]).toEqual([
        ['fixture-clarification:t2:c1', { email: 'ada@example.com', plan: 'pro' }],
      ]);
      expect([...ledger.deletions]).toEqual([['fixture-confirmation:t1:c1', { email: 'grace@example.com' }]]);
      expect([...ledger.charges]).toEqual([
        ['fixture-midstep:t1:c1', { email: 'lin@example.com', cents: 4200 }],
      ]);
      expect(ledger.calls.sort()).toEqual([
        'fixture-clarification:t2:c1',
        'fixture-confirmation:t1:c1',
        'fixture-midstep:t1:c1',
      ]);

      // Stored as finished, in this release's snapshot format.
      for (const { runId } of Object.values(FIXTURE_RUNS)) {
        const stored = (await fixture.store.load(runId))!;
        expect(stored.status, runId).toBe('completed');
        expect((stored.snapshot as Record<string, unknown>)[SNAPSHOT_FORMAT_KEY]).toBe(SNAPSHOT_FORMAT);
      }
    },
  );

  it.skipIf(kind.skip !== undefined)(
    'restores a deliberately broken stored snapshot as a failed run with SnapshotMigrationError, once',
    async () => {
      kind.require();
      const fixture = await kind.open('0.1.0');
      opened.push(fixture);
      const { store } = fixture;
      const runId = FIXTURE_RUNS.midstep.runId;
      const stored = (await store.load(runId))!;
      // A state this run machine never had, with the context's batch gone.
      const { batch: _, ...context } = (stored.snapshot as { context: Record<string, unknown> }).context;
      const broken = { ...(stored.snapshot as object), value: 'deliberating', context };
      const saved = await store.save(runId, {
        expectedVersion: stored.version,
        status: 'running',
        snapshot: broken,
      });
      const ledger = createLedger();
      const errors: unknown[] = [];
      const runtime = upgradedRuntime(store, ledger, errors);

      const [handle] = (await runtime.recover()).recovered;
      expect(handle?.runId).toBe(runId);
      expect(handle!.status).toBe('failed');
      const outcome = await handle!.result();
      expect(outcome.status).toBe('failed');
      expect(outcome.error).toMatchObject({ name: 'SnapshotMigrationError', recoverable: false });
      expect(outcome.error!.message).toMatch(
        /format 1\) cannot be restored by this release \(format \d+\): it is not a run snapshot: its context has no batch/,
      );
      expect(outcome.transcript.map((message) => message.role)).toEqual(['user', 'assistant']);
      expect(errors).toEqual([
        expect.objectContaining({ name: 'SnapshotMigrationError', fromVersion: 1, runId }),
      ]);
      expect(ledger.calls).toEqual([]);

      // The store says failed, keeps the snapshot as it was, and logs why; recovery leaves it alone.
      const after = (await store.load(runId))!;
      expect(after).toMatchObject({ status: 'failed', version: saved.version + 2 });
      expect(after.owner).toBeUndefined();
      expect(after.snapshot).toEqual(broken);
      const events = await store.readEvents(runId);
      expect(events.at(-1)?.event).toMatchObject({
        type: 'run_failed',
        error: { name: 'SnapshotMigrationError' },
      });
      expect((await runtime.recover()).recovered).toEqual([]);
      // Asked for by id, it is the same failed run again, and nothing more is written.
      const again = await runtime.resume(runId);
      expect((await again.result()).error?.name).toBe('SnapshotMigrationError');
      expect((await store.load(runId))!.version).toBe(after.version);
    },
  );

  it.skipIf(kind.skip !== undefined)(
    'refuses a snapshot a newer release stored, naming both formats, and leaves it in the store',
    async () => {
      kind.require();
      const fixture = await kind.open('0.1.0');
      opened.push(fixture);
      const { store } = fixture;
      const runId = FIXTURE_RUNS.clarification.runId;
      const stored = (await store.load(runId))!;
      const newer = { ...(stored.snapshot as object), [SNAPSHOT_FORMAT_KEY]: SNAPSHOT_FORMAT + 1 };
      await store.save(runId, { expectedVersion: stored.version, status: 'awaiting', snapshot: newer });
      const runtime = upgradedRuntime(store, createLedger());

      const refused = runtime.provideClarification(runId, { id: 'which-plan', answer: 'pro' });
      await expect(refused).rejects.toThrow(SnapshotFormatTooNewError);
      await expect(refused).rejects.toThrow(
        `snapshot format ${SNAPSHOT_FORMAT + 1}, newer than this release reads (format ${SNAPSHOT_FORMAT})`,
      );
      const after = (await store.load(runId))!;
      expect(after.status).toBe('awaiting');
      expect(after.snapshot).toEqual(newer);
      // Released again: the newer release's process may claim it at once.
      expect(after.owner).toBeUndefined();
      expect((await runtime.list()).find((run) => run.runId === runId)?.awaiting).toBeNull();
    },
  );
});
