import { describe, expect, it } from 'vitest';
import { toGraphModel } from './graph-model.ts';
import { toSimpleGraph } from './simple-graph.ts';

describe('toSimpleGraph (the inspector’s simple view, issue 15)', () => {
  const model = toGraphModel();
  const simple = toSimpleGraph(model);
  const ids = simple.graph.states.map((state) => state.id);

  it('keeps the states a run rests in and folds the transient ones', () => {
    expect(ids).toEqual([
      'run',
      'run.planning',
      'run.validating',
      'run.executing',
      'run.canceling',
      'run.settling',
      'run.settling.policies',
      'run.awaiting',
      'run.awaiting.clarification',
      'run.awaiting.externalTools',
      'run.awaiting.confirmation',
      'run.awaiting.inDoubt',
      'run.awaiting.elicitation',
      'run.awaiting.backoff',
      'run.resuming',
      'run.finalizing',
      'run.completed',
      'run.failed',
      'run.canceled',
    ]);
    // Every machine state shows as a simple state, or is folded into edges (transient).
    expect(simple.shownAs['run.validating.policies']).toBe('run.validating');
    expect(simple.shownAs['run.admitting']).toBeUndefined();
    for (const edge of simple.graph.edges) {
      expect(ids).toContain(edge.source);
      for (const target of edge.targets) expect(ids).toContain(target);
    }
  });

  it('labels an edge with the guards that decided, and keeps the machine edges it stands for', () => {
    const edge = simple.graph.edges.find((candidate) => candidate.id === 'run.validating>run.executing')!;
    // Straight on, or ahead of an approval some of the batch waits for (docs/policies.md §Mixed batches).
    expect(edge.label).toBe('runsAheadOfApproval, hasAdmittedCalls');
    // Through `validating.checking` (no policies) or `validating.policies`, then `admitting`.
    const ways = simple.via[edge.id]!;
    const byId = new Map(model.edges.map((e) => [e.id, e]));
    expect(ways.length).toBeGreaterThanOrEqual(2);
    for (const way of ways) {
      expect(byId.get(way.at(-1)!)?.source).toBe('run.admitting');
      expect(['runsAheadOfApproval', 'hasAdmittedCalls']).toContain(byId.get(way.at(-1)!)?.guard);
    }
    // One arrow per pair of states.
    const pairs = simple.graph.edges.map((e) => `${e.source}>${e.targets[0]}`);
    expect(new Set(pairs).size).toBe(pairs.length);
  });

  it('follows the machine: a state made transient disappears from the simple view', () => {
    const changed = structuredClone(model);
    // `executing` left only by `always` and invoking nothing: transient.
    changed.edges = changed.edges.filter((edge) => edge.source !== 'run.executing' || edge.kind === 'always');
    expect(toSimpleGraph(changed).graph.states.map((state) => state.id)).not.toContain('run.executing');
  });
});
