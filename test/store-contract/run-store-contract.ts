/**
 * The RunStore contract as one conformance suite that every store runs (docs/durability.md
 * §Stores): the promises of `stores/run-store.ts`, each a named case in `cases/`, registered as
 * one vitest `it` each, in one `describe` per operation. Each store's test file runs it with a
 * fixture that opens that store, and declares the cases that do not apply to it, each with its
 * reason (as Hono's routers run `common.case.test.ts`):
 *
 *     runStoreContract('sqliteStore', async ({ now }) => ({ store, openSecond, openDead, ... }), {
 *       skip: [{ reason: 'why', cases: ['a case name'] }],
 *     });
 *
 * A skipped case prints its reason (`Skipping contract case …`) and is reported skipped with it
 * as its note; a skip that names no case fails the suite, so none outlives its case. Test support
 * (vitest, fast-check): not part of the package.
 *
 * @module
 */

import { afterEach, beforeEach, describe, it } from 'vitest';
import type { NewRun } from '../../stores/run-store.ts';
import { badInput } from './cases/bad-input.ts';
import { createAndLoad } from './cases/create-and-load.ts';
import { deleteRuns } from './cases/delete.ts';
import { events } from './cases/events.ts';
import { eventsWithRun } from './cases/events-with-run.ts';
import { list } from './cases/list.ts';
import { ownership } from './cases/ownership.ts';
import { runSnapshots } from './cases/run-snapshots.ts';
import { save } from './cases/save.ts';
import { unavailable } from './cases/unavailable.ts';
import { values } from './cases/values.ts';
import {
  type CaseClock,
  type RunStoreContractContext,
  type RunStoreContractFixture,
  type StoreCase,
  type StoreCaseContext,
  type StoreCaseGroup,
  T0,
} from './store-case.ts';

export type { RunStoreContractContext, RunStoreContractFixture } from './store-case.ts';

/** Every case of the contract, by operation, in the order they run. */
export const RUN_STORE_CONTRACT: readonly StoreCaseGroup[] = [
  createAndLoad,
  save,
  runSnapshots,
  list,
  events,
  eventsWithRun,
  ownership,
  deleteRuns,
  values,
  badInput,
  unavailable,
];

/** Cases a store does not run, and why. */
export interface ContractSkip {
  /** Why these cases do not apply to the store (printed, and the skipped tests' note). */
  reason: string;
  /** Case names (the tests' titles) as in `cases/`. */
  cases: string[];
}

export interface RunStoreContractOptions {
  /** Skip the whole suite (its database is not running); the reason is in the suite's title. */
  skipAll?: string;
  /** Cases this store does not run, each with its reason. */
  skip?: ContractSkip[];
  /** fast-check runs of the version property. Default 40. */
  propertyRuns?: number;
}

/**
 * Registers the contract suite for the store `name` opens with `makeFixture`. Throws when a skip
 * names a case the contract does not have.
 */
export function runStoreContract(
  name: string,
  makeFixture: (context: RunStoreContractContext) => Promise<RunStoreContractFixture>,
  options: RunStoreContractOptions = {},
): void {
  const skipped = skipReasons(options.skip ?? []);
  const title =
    options.skipAll === undefined
      ? `RunStore contract: ${name}`
      : `RunStore contract: ${name} (${options.skipAll})`;
  describe.skipIf(options.skipAll !== undefined)(title, () => {
    let context: StoreCaseContext | undefined;
    let fixture: RunStoreContractFixture | undefined;

    beforeEach(async () => {
      const clock = caseClock();
      fixture = undefined;
      fixture = await makeFixture({ now: clock.now });
      context = { store: fixture.store, fixture, clock, newRun, propertyRuns: options.propertyRuns ?? 40 };
    });

    afterEach(async () => {
      await fixture?.dispose();
    });

    for (const group of RUN_STORE_CONTRACT) {
      describe(group.name, () => {
        for (const storeCase of group.cases)
          registerCase(name, storeCase, skipped.get(storeCase.name), () => context!);
      });
    }
  });
}

/** One case as one `it`: run, or skipped with its reason printed and as the test's note. */
function registerCase(
  store: string,
  storeCase: StoreCase,
  skipReason: string | undefined,
  context: () => StoreCaseContext,
): void {
  it(
    storeCase.name,
    async ({ skip }) => {
      if (skipReason !== undefined) {
        console.warn(`Skipping contract case "${storeCase.name}" on ${store}: ${skipReason}`);
        skip(skipReason);
      }
      await storeCase.run(context());
    },
    storeCase.timeoutMs,
  );
}

/** Case name → reason; throws on a name no case has (a stale skip). */
function skipReasons(skips: ContractSkip[]): Map<string, string> {
  const known = new Set(
    RUN_STORE_CONTRACT.flatMap((group) => group.cases.map((storeCase) => storeCase.name)),
  );
  const reasons = new Map<string, string>();
  for (const { reason, cases } of skips) {
    if (reason.trim() === '') throw new TypeError('runStoreContract: every skip needs its reason');
    for (const caseName of cases) {
      if (!known.has(caseName))
        throw new TypeError(`runStoreContract: no contract case is named "${caseName}"`);
      reasons.set(caseName, reason);
    }
  }
  return reasons;
}

/** A clock at {@link T0} that cases set and move forward. */
function caseClock(): CaseClock {
  let ms = T0;
  return {
    now: () => ms,
    set: (to) => {
      ms = to;
    },
    advance: (by) => {
      ms += by;
    },
  };
}

function newRun(runId: string, extra: Partial<NewRun> = {}): NewRun {
  return {
    runId,
    agentId: 'support',
    status: 'running',
    snapshot: { value: 'planning', context: { turn: 1 } },
    ...extra,
  };
}
