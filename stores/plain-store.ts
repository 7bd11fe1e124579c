/**
 * A store object as the factories (`memoryStore`, `sqliteStore`, `postgresStore`) return it: a
 * plain object whose members are the store's own, bound to it. The stores are classes whose
 * methods are their steps; an app's wrapper that spreads a store (`{ ...store, save }`) or calls
 * a method detached from it keeps working as it did when the factories returned object literals.
 *
 * @module
 */

import type { RunStore } from './run-store.ts';

/** Every method of {@link RunStore}, in the interface's order. */
export const RUN_STORE_METHODS = [
  'create',
  'load',
  'save',
  'list',
  'appendEvents',
  'readEvents',
  'delete',
  'close',
  'heartbeat',
  'claim',
  'release',
] as const satisfies readonly (keyof RunStore)[];

/** `store`'s `volatile`, `maxRunIdBytes` (when set) and methods as own members of a plain object. */
export function plainStore(store: RunStore): RunStore {
  const plain: Record<string, unknown> = {};
  if (store.volatile !== undefined) plain.volatile = store.volatile;
  if (store.maxRunIdBytes !== undefined) plain.maxRunIdBytes = store.maxRunIdBytes;
  for (const method of RUN_STORE_METHODS) {
    const implementation = store[method] as ((...args: never[]) => unknown) | undefined;
    if (implementation !== undefined) plain[method] = implementation.bind(store);
  }
  return plain as unknown as RunStore;
}
