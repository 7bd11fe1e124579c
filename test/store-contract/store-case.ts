/**
 * What a case of the RunStore contract is given and what it is (`run-store-contract.ts` runs
 * them). A case is one promise of `stores/run-store.ts`, shown with real values on the store
 * under test.
 *
 * @module
 */

import type { NewRun, RunStore } from '../../stores/run-store.ts';

/** The clock every store a fixture opens reads: epoch ms 2026-01-15T09:30Z at each case's start. */
export const T0 = Date.UTC(2026, 0, 15, 9, 30);

/** What the contract gives a fixture: the clock every store it opens must use. */
export interface RunStoreContractContext {
  /** Epoch ms; cases move it forward to order runs and to run out leases. */
  now: () => number;
}

/** One case's database and the stores on it. */
export interface RunStoreContractFixture {
  /** A store on a fresh, empty database, using `context.now`. */
  store: RunStore;
  /**
   * Another store on the same database, as a second process would open it (for the memory
   * store, which has no database apart from the object, the same store).
   */
  openSecond(): Promise<RunStore>;
  /** A store whose database is dead or unreachable. */
  openDead(): Promise<RunStore>;
  /**
   * What a RunStoreUnavailableError from `openDead()`'s store must say: the store, the cause.
   * The first pattern must also match the error of a call on `store` once closed.
   */
  deadMessage: RegExp[];
  /** Closes every store the fixture opened and removes the database. */
  dispose(): Promise<void>;
}

/** The case's clock: what `RunStoreContractContext.now` returns. */
export interface CaseClock {
  now(): number;
  /** Sets it to `ms` (epoch ms). */
  set(ms: number): void;
  /** Moves it forward by `ms`. */
  advance(ms: number): void;
}

/** What a case runs with. */
export interface StoreCaseContext {
  /** `fixture.store`. */
  store: RunStore;
  fixture: RunStoreContractFixture;
  clock: CaseClock;
  /** A running run of agent `support` at snapshot `{ value: 'planning', context: { turn: 1 } }`, with `extra` over it. */
  newRun(runId: string, extra?: Partial<NewRun>): NewRun;
  /** fast-check runs of a property case. */
  propertyRuns: number;
}

/** One case: its name (the test's title) and what it checks. */
export interface StoreCase {
  name: string;
  run(context: StoreCaseContext): void | Promise<void>;
  /** Its time limit, ms, when the default (vitest's testTimeout) is too short on a loaded machine. */
  timeoutMs?: number;
}

/** The cases of one operation (the suite's `describe`). */
export interface StoreCaseGroup {
  name: string;
  cases: StoreCase[];
}
