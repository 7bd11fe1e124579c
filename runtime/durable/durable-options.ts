/**
 * `createRuntime({ durable })` (docs/durability.md): the options of durable runs.
 *
 * @module
 */

import type { RecoverOptions } from './recover-runs.ts';
import type { PersistedWrite } from './run-persister.ts';

/** `createRuntime({ durable })`: how runs are kept in the store (docs/durability.md). */
export interface DurableOptions {
  /**
   * Hibernation (issue 36 item 3; docs/durability.md §Hibernation): a run that has waited this
   * long for an answer (a clarification, external tool results, a confirmation; not a backoff,
   * which wakes by itself), ms, with everything written, leaves memory: its actor is stopped and
   * its claim released, and what stays is the store's copy (under 1 KB of heap a run on SQLite).
   * An answer by id, or through a handle the app kept (it stays valid: `status`, `awaiting`,
   * `result()`, `events$`), restores it transparently. Default 60,000 on a durable store; off on
   * a volatile one (the memory store: its copy of the run is in memory anyway). `false`: never.
   */
  hibernateAfterMs?: number | false;
  /**
   * The older name of {@link hibernateAfterMs}, for any store (the memory store included); used
   * when `hibernateAfterMs` is not given. Default: none.
   */
  evictAfterMs?: number;
  /**
   * This runtime's name as the owner of the runs it hosts: a label for people and for "my runs"
   * (a pod name, `host:port`). A restarted process under the name it had recovers that name's
   * runs (`recover: true`) once the crashed instance's lease lapses (`leaseMs`; at once after a
   * clean `close()`). The lease itself is this runtime instance's (`runtime.instance`), so two
   * live runtimes given one name never both advance a run: a run one holds is refused to the
   * other (RunConflictError) until its lease lapses. Default: `host:pid:random`, unique per process.
   */
  owner?: string;
  /** How long this owner's lease lives unrenewed, ms (renewed every third of it). Default 30 000. */
  leaseMs?: number;
  /** Delay before a failed write is retried, ms, doubling up to `maxMs`. Default 100, up to 5 000. */
  retry?: { initialMs?: number; maxMs?: number };
  /** Called after each accepted write (state, version, events, duration): metrics, tests. */
  onPersisted?: (write: PersistedWrite) => void;
  /**
   * At start, restore the stored runs nobody is advancing (docs/durability.md §Recovery): `true` for
   * this owner's and released runs; `{ takeover: 'lapsed' }` also other owners' once their lease
   * ran out, looking again until `close()`. Default: off (`runtime.recover()` does one pass).
   */
  recover?: boolean | RecoverOptions;
}
