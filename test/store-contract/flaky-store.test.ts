/**
 * The contract on the store the durable suites build (`flakyStore` in test/support/durable-stores.ts):
 * a memory store wrapped to fail on demand. While up it must be a RunStore like any other, or the
 * suites that take it down test a store the runtime never meets; while down it fails every call
 * as a dead database does.
 */
import { memoryStore } from '../../stores/memory-store.ts';
import { flakyStore } from '../support/durable-stores.ts';
import { runStoreContract } from './run-store-contract.ts';

runStoreContract(
  'flakyStore(memoryStore())',
  async ({ now }) => {
    const inner = memoryStore({ now });
    const store = flakyStore(inner);
    const dead = flakyStore(memoryStore({ now }));
    dead.down = true;
    return {
      store,
      // One memory store is the whole database: a second "process" shares it.
      openSecond: async () => store,
      openDead: async () => dead,
      deadMessage: [/flaky test store/, /ECONNREFUSED/],
      dispose: () => inner.close(),
    };
  },
  {
    skip: [
      {
        reason:
          'close() passes through to the wrapped store: a closed flaky store fails as the memory run store, which names itself (the memoryStore run checks that message)',
        cases: ['rejects every call on a closed store with RunStoreUnavailableError naming the store'],
      },
    ],
  },
);
