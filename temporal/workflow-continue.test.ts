import { beforeEach, describe, expect, it, vi } from 'vitest';

/**
 * The continue-as-new gate reads the history only where a replay reads the same (issue 36 item 7's
 * limits; a nondeterminism error seen in CI). Temporal's workflow API exists only inside a
 * worker's sandbox, so its two calls the gate makes are stood in for here: `patched` (which
 * patches a history has) and `workflowInfo` (the history length of the current activation).
 */
const sandbox = vi.hoisted(() => ({
  patches: new Set<string>(),
  asked: [] as string[],
  info: { historyLength: 0, historySize: 0, continueAsNewSuggested: false },
}));
vi.mock('@temporalio/workflow', () => ({
  patched: (id: string) => {
    sandbox.asked.push(id);
    return sandbox.patches.has(id);
  },
  workflowInfo: () => ({ ...sandbox.info }),
  ApplicationFailure: { nonRetryable: (message: string) => new Error(message) },
}));

const { ContinueAsNewGate } = await import('./workflow-continue.ts');

const ALL = [
  'toolwarden.continue-as-new',
  'toolwarden.transcript-archive',
  'toolwarden.continue-as-new-stable-reading',
];

beforeEach(() => {
  sandbox.patches = new Set(ALL);
  sandbox.asked = [];
  sandbox.info = { historyLength: 97, historySize: 70_000, continueAsNewSuggested: false };
});

describe('ContinueAsNewGate', () => {
  it('decides from the reading taken where an activity resolved, not from a later task a local activity ran into', () => {
    // The CI history: the tool's result arrived in the task started at event 97; the review (a
    // local activity) resolved, live, in a task started at 101; a replay resolves it in 97's.
    const gate = new ContinueAsNewGate({ maxEvents: 100 });
    gate.planned = 1;
    gate.read();
    sandbox.info.historyLength = 101;
    expect(gate.due()).toBe(false);
    // The next activity's result arrives in a later task: read there, both agree it is due.
    gate.read();
    expect(gate.due()).toBe(true);
  });

  it('reads the size and the server suggestion at the same points', () => {
    const gate = new ContinueAsNewGate({ maxBytes: 80_000 });
    gate.planned = 1;
    sandbox.info = { historyLength: 120, historySize: 90_000, continueAsNewSuggested: true };
    expect(gate.due()).toBe(false);
    gate.read();
    expect(gate.due()).toBe(true);
  });

  it('keeps reading wherever it is asked for executions whose history lacks the patch (what they recorded)', () => {
    sandbox.patches.delete('toolwarden.continue-as-new-stable-reading');
    const gate = new ContinueAsNewGate({ maxEvents: 100 });
    gate.planned = 1;
    sandbox.info.historyLength = 101;
    expect(gate.due()).toBe(true);
  });

  it('asks its patches once, at the start, in the order of their markers', () => {
    new ContinueAsNewGate(undefined);
    expect(sandbox.asked).toEqual(ALL);
  });

  it('is never due before a planner turn, nor for runs started without continue-as-new', () => {
    sandbox.info.continueAsNewSuggested = true;
    const gate = new ContinueAsNewGate({ maxEvents: 1 });
    expect(gate.due()).toBe(false);
    sandbox.patches.delete('toolwarden.continue-as-new');
    const old = new ContinueAsNewGate({ maxEvents: 1 });
    old.planned = 3;
    old.read();
    expect(old.due()).toBe(false);
  });
});
