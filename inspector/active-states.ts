import type { GraphModel } from '../machines/diagram/graph-model.ts';

/**
 * The ids of the active states for a state value, ancestors first: `{ awaiting: 'clarification' }`
 * in machine `run` gives `['run', 'run.awaiting', 'run.awaiting.clarification']`. Ids follow
 * XState's default (`<machine id>.<path>`); pass the graph to resolve states with custom ids.
 */
export function activeStateIds(machineId: string, value: unknown, graph?: GraphModel): string[] {
  const byPath = new Map<string, string>();
  if (graph && graph.machineId === machineId) {
    for (const state of graph.states) byPath.set(state.path.join('.'), state.id);
  }
  const idOf = (path: string[]) => byPath.get(path.join('.')) ?? [machineId, ...path].join('.');
  const out = [idOf([])];
  const walk = (node: unknown, path: string[]) => {
    if (typeof node === 'string') {
      out.push(idOf([...path, node]));
      return;
    }
    if (node === null || typeof node !== 'object') return;
    for (const [key, child] of Object.entries(node)) {
      out.push(idOf([...path, key]));
      walk(child, [...path, key]);
    }
  };
  walk(value, []);
  return out;
}
