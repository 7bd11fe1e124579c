import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { persistedSnapshotOf } from '../../machines/persisted-snapshot.ts';
import { runMachine } from '../../machines/run-machine.ts';
import {
  type PersistedSnapshotJson,
  SNAPSHOT_FORMAT,
  SNAPSHOT_FORMAT_KEY,
  type SnapshotMigrator,
  snapshotFormatOf,
} from '../../machines/snapshot-format.ts';
import { deepFreeze } from '../../policies/policy-json.ts';
import { DEFAULT_CAPS } from '../../run/caps.ts';
import { migrateSnapshot, SnapshotFormatTooNewError, SnapshotMigrationError } from './snapshot-migration.ts';

/** A persisted run snapshot as this release writes it (a new run, not started). */
function currentSnapshot(): PersistedSnapshotJson {
  const actor = createActor(runMachine, {
    input: {
      runId: 'r1',
      agent: { id: 'a' },
      messages: [{ role: 'user', content: 'hi' }],
      caps: DEFAULT_CAPS,
    },
  });
  return JSON.parse(JSON.stringify(persistedSnapshotOf(actor)));
}

/** 0.1.0 wrote no format member. */
function release010Snapshot(): PersistedSnapshotJson {
  const { [SNAPSHOT_FORMAT_KEY]: _, ...rest } = currentSnapshot();
  return rest;
}

/** Two test migrators: format 2 renames `context.turn` to `context.turns`, format 3 adds `context.note`. */
const renameTurn: SnapshotMigrator = {
  from: 1,
  change: 'context.turn is context.turns',
  migrate: ({ context, ...rest }) => {
    const { turn, ...others } = context as Record<string, unknown>;
    return { ...rest, context: { ...others, turns: turn } };
  },
};
const addNote: SnapshotMigrator = {
  from: 2,
  change: 'context.note',
  migrate: (snapshot) => ({ ...snapshot, context: { ...(snapshot.context as object), note: 'migrated' } }),
};

describe('the snapshot format', () => {
  it('is written on every persisted snapshot, and absent means format 1 (release 0.1.0)', () => {
    expect(currentSnapshot()[SNAPSHOT_FORMAT_KEY]).toBe(SNAPSHOT_FORMAT);
    expect(snapshotFormatOf(release010Snapshot())).toBe(1);
    expect(snapshotFormatOf({ [SNAPSHOT_FORMAT_KEY]: 'two' })).toBeNaN();
  });
});

describe('migrateSnapshot', () => {
  it('returns a current snapshot as it is', () => {
    const snapshot = currentSnapshot();
    expect(migrateSnapshot(snapshot)).toBe(snapshot);
  });

  it('runs every migrator from the stored format up, never changing what it was given', () => {
    const stored = deepFreeze(release010Snapshot());
    const migrated = migrateSnapshot(stored, { migrators: [renameTurn, addNote] });
    expect(migrated[SNAPSHOT_FORMAT_KEY]).toBe(3);
    expect(migrated.context).toMatchObject({ turns: 1, note: 'migrated', runId: 'r1' });
    expect(migrated.context).not.toHaveProperty('turn');
    expect((stored.context as { turn: number }).turn).toBe(1);
    // From format 2, only the second one runs.
    const fromTwo = migrateSnapshot(
      { ...stored, context: { ...(stored.context as object), turns: 4 }, [SNAPSHOT_FORMAT_KEY]: 2 },
      { migrators: [renameTurn, addNote] },
    );
    expect(fromTwo.context).toMatchObject({ turns: 4, note: 'migrated' });
  });

  it('says which format failed, and why, when a migrator throws', () => {
    const failing: SnapshotMigrator = {
      from: 2,
      change: 'pending calls get an effect class',
      migrate: () => {
        throw new TypeError('batch.pending[0] has no name');
      },
    };
    let error: unknown;
    try {
      migrateSnapshot(release010Snapshot(), { runId: 'r1', migrators: [renameTurn, failing] });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(SnapshotMigrationError);
    expect(error).toMatchObject({ fromVersion: 1, toVersion: 3, failedAt: 2, runId: 'r1' });
    expect((error as Error).cause).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe(
      'The stored snapshot of run "r1" (format 1) cannot be restored by this release (format 3): migrating ' +
        'format 2 → 3 (pending calls get an effect class) failed: batch.pending[0] has no name (docs/durability.md §Upgrades)',
    );
  });

  it('refuses what is no run snapshot after migrating, and a format that is not a positive integer', () => {
    expect(() => migrateSnapshot({ status: 'active', value: 'planning', context: { runId: 'r1' } })).toThrow(
      /it is not a run snapshot: its context has no messages/,
    );
    expect(() => migrateSnapshot(null)).toThrow(SnapshotMigrationError);
    expect(() => migrateSnapshot({ ...currentSnapshot(), [SNAPSHOT_FORMAT_KEY]: 0 })).toThrow(
      /its \$toolwarden\.format is 0, not a positive integer/,
    );
  });

  it('refuses a snapshot newer than this release, naming both formats', () => {
    const newer = { ...currentSnapshot(), [SNAPSHOT_FORMAT_KEY]: SNAPSHOT_FORMAT + 1 };
    expect(() => migrateSnapshot(newer, { runId: 'r1' })).toThrow(SnapshotFormatTooNewError);
    expect(() => migrateSnapshot(newer, { runId: 'r1' })).toThrow(
      `Run "r1" was stored in snapshot format ${SNAPSHOT_FORMAT + 1}, newer than this release reads (format ${SNAPSHOT_FORMAT})`,
    );
  });
});
