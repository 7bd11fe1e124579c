import { describe, expect, it } from 'vitest';
import { turnId } from './run-context.ts';

describe('turnId', () => {
  it('names the run’s turn, whichever turn and run come next (kept once a turn, issue 29 item 3)', () => {
    expect(turnId({ runId: 'r-1', turn: 1 })).toBe('r-1:t1');
    expect(turnId({ runId: 'r-1', turn: 1 })).toBe('r-1:t1');
    expect(turnId({ runId: 'r-2', turn: 1 })).toBe('r-2:t1');
    expect(turnId({ runId: 'r-1', turn: 2 })).toBe('r-1:t2');
    // A run restored from an earlier snapshot goes back a turn.
    expect(turnId({ runId: 'r-1', turn: 1 })).toBe('r-1:t1');
    for (let index = 0; index < 5000; index++) turnId({ runId: `many-${index}`, turn: 0 });
    expect(turnId({ runId: 'r-2', turn: 3 })).toBe('r-2:t3');
  });
});
