import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../../policies/policy-json.ts';
import { V1_TO_V2 } from './v1-to-v2.ts';

/** A format-1 snapshot (release 0.1.0) stopped in `executing`: one call done, one in flight, one the app's. */
const executing = () =>
  deepFreeze({
    status: 'active',
    value: 'executing',
    context: {
      runId: 'r',
      batch: {
        pending: [
          { toolCallId: 'r:t1:c1', name: 'a.done', status: 'admitted', input: {} },
          { toolCallId: 'r:t1:c2', name: 'billing.charge', status: 'admitted', input: {} },
          { toolCallId: 'r:t1:c3', name: 'mail.send', status: 'admitted', input: {}, external: true },
          { toolCallId: 'r:t1:c4', name: 'a.bad', status: 'rejected', input: {} },
        ],
        results: [{ name: 'a.done', toolCallId: 'r:t1:c1', executed: true, result: 1 }, null, null, {}],
      },
    },
  });

describe('snapshot format 1 → 2 (calls in doubt)', () => {
  it("marks only a format-1 call in flight (admitted, the run's, no result) to run again as 0.1.0 would", () => {
    const stored = executing();
    const migrated = V1_TO_V2.migrate(stored) as ReturnType<typeof executing>;
    expect(migrated.context.batch.pending.map((call) => (call as { restoreAs?: string }).restoreAs)).toEqual([
      undefined,
      'rerun',
      undefined,
      undefined,
    ]);
    expect(stored.context.batch.pending[1]).not.toHaveProperty('restoreAs'); // the argument unchanged
  });

  it('leaves a run with nothing in flight as it is', () => {
    const waiting = {
      status: 'active',
      value: { awaiting: 'clarification' },
      context: { batch: { pending: [], results: [] } },
    };
    expect(V1_TO_V2.migrate(waiting)).toEqual(waiting);
    expect(V1_TO_V2.migrate({ status: 'done' })).toEqual({ status: 'done' });
  });
});
