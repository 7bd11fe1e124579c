import type { AnyActorRef } from 'xstate';
import type { RunActorRef } from './run-machine.ts';
import { SNAPSHOT_FORMAT, SNAPSHOT_FORMAT_KEY } from './snapshot-format.ts';

/**
 * The run actor's persisted snapshot: exactly what `actor.getPersistedSnapshot()` returns (the
 * same members in the same order, the context object itself), built directly.
 *
 * XState 5's `getPersistedSnapshot` takes the snapshot apart with an object rest (slow in V8: the
 * excluded keys are looked up member by member), spreads it again, and walks the whole context
 * (`persistContext`, the whole transcript) looking for actor references to replace, returning
 * the context itself when it finds none. A run context (`RunContext`, run-context.ts) is JSON by
 * contract and never holds actor references (children live in `children`), so the context goes
 * in as it is, and the rest is XState's own shape:
 *
 * | member         | value                                                                 |
 * |----------------|-----------------------------------------------------------------------|
 * | `status`, `output`, `error`, `value` | the snapshot's                                  |
 * | `historyValue` | each history state's nodes as `{ id }` (XState's `serializeHistoryValue`) |
 * | `context`      | the snapshot's context object                                         |
 * | `children`     | per child: its persisted snapshot, `src`, `systemId`, `syncSnapshot`  |
 * | `$toolwarden.format` | ours, last: the snapshot's format version (snapshot-format.ts)  |
 *
 * XState ignores `$toolwarden.format` when it restores a snapshot (it reads its own members
 * only); the runtime reads it to migrate snapshots a former release stored (docs/durability.md
 * §Upgrades). persisted-snapshot.test.ts compares the rest with `actor.getPersistedSnapshot()` in
 * every state of a run, members and their order included: an XState upgrade that changes the
 * shape fails there.
 */
export function persistedSnapshotOf(actor: RunActorRef): unknown {
  const snapshot = actor.getSnapshot();
  const children: Record<string, unknown> = {};
  const running = snapshot.children as Record<string, ChildActor | undefined>;
  for (const id in running) {
    const child = running[id]!;
    children[id] = {
      snapshot: child.getPersistedSnapshot(),
      src: child.src,
      systemId: child.systemId,
      syncSnapshot: child._syncSnapshot,
    };
  }
  return {
    status: snapshot.status,
    output: snapshot.output,
    error: snapshot.error,
    value: snapshot.value,
    historyValue: serializeHistoryValue(snapshot.historyValue),
    context: snapshot.context,
    children,
    [SNAPSHOT_FORMAT_KEY]: SNAPSHOT_FORMAT,
  };
}

/** A child as XState's `Actor` has it: `systemId` and `_syncSnapshot` are not on `AnyActorRef`. */
type ChildActor = AnyActorRef & { systemId?: string; _syncSnapshot?: boolean };

/** XState's `serializeHistoryValue`: each history state's remembered nodes as `{ id }`. */
function serializeHistoryValue(historyValue: unknown): Record<string, { id: string }[]> {
  const result: Record<string, { id: string }[]> = {};
  if (typeof historyValue !== 'object' || historyValue === null) return result;
  const entries = historyValue as Record<string, unknown>;
  for (const key in entries) {
    const value = entries[key];
    if (Array.isArray(value)) result[key] = value.map((node: { id: string }) => ({ id: node.id }));
  }
  return result;
}
