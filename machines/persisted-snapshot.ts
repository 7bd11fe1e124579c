import type { RunActorRef } from './run-machine.ts';

/** Stands in for the context while XState persists the rest of a snapshot. */
const NO_CONTEXT = Object.freeze({});

/**
 * The run actor's persisted snapshot: exactly what `actor.getPersistedSnapshot()` returns, without
 * its walk of the whole context.
 *
 * XState 5 persists a machine's context with `persistContext`, which visits every object of it
 * (the whole transcript) looking for actor references to replace, and returns the context itself
 * when it finds none: ~5 µs per write at 20 messages, two writes per step. A run context
 * (`RunContext`, run-context.ts) is JSON by contract and never holds actor references (children
 * live in `children`), so this persists the snapshot around an empty context and puts the context
 * back: the same object XState would have put there, in the same place.
 */
export function persistedSnapshotOf(actor: RunActorRef): unknown {
  const snapshot = actor.getSnapshot();
  const persisted = snapshot.machine.getPersistedSnapshot({ ...snapshot, context: NO_CONTEXT } as never);
  (persisted as { context?: unknown }).context = snapshot.context;
  return persisted;
}
