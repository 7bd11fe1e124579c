import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../stores/memory-store.ts';
import { RUN_STORE_CONTRACT, runStoreContract } from './run-store-contract.ts';

const fixture = async () => {
  const store = memoryStore();
  return {
    store,
    openSecond: async () => store,
    openDead: async () => store,
    deadMessage: [],
    dispose: () => store.close(),
  };
};

describe('runStoreContract', () => {
  it('names every case once, so a skip names exactly one case', () => {
    const names = RUN_STORE_CONTRACT.flatMap((group) => group.cases.map((storeCase) => storeCase.name));
    expect(names.length).toBeGreaterThanOrEqual(51);
    expect(new Set(names).size).toBe(names.length);
  });

  it('refuses a skip that names no case, or gives no reason, before registering anything', () => {
    expect(() =>
      runStoreContract('memoryStore', fixture, { skip: [{ reason: 'r', cases: ['no such case'] }] }),
    ).toThrow('runStoreContract: no contract case is named "no such case"');
    const name = RUN_STORE_CONTRACT[0]!.cases[0]!.name;
    expect(() =>
      runStoreContract('memoryStore', fixture, { skip: [{ reason: ' ', cases: [name] }] }),
    ).toThrow('runStoreContract: every skip needs its reason');
  });
});
