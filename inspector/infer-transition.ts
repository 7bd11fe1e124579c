import type { GraphEdge, GraphModel } from '../machines/diagram/graph-model.ts';

/**
 * The edges a snapshot change most likely took, for inspection sources that send snapshots but
 * no microsteps (`@statelyai/inspect`'s WebSocket inspector). Picks, in priority order, the
 * first edge whose source was active, whose event matches and whose target is now active,
 * following `always` edges through transient states (`resuming → routing → planning`).
 * Returns `[]` when nothing fits; exact edges come from `@xstate.microstep` when available.
 */
export function inferTransition(
  graph: GraphModel,
  before: readonly string[],
  after: readonly string[],
  eventType: string,
): string[] {
  const was = new Set(before);
  const now = new Set(after);
  const bySource = new Map<string, GraphEdge[]>();
  for (const edge of graph.edges) bySource.set(edge.source, [...(bySource.get(edge.source) ?? []), edge]);
  // Deepest active states first: a child's transitions take priority over its ancestors'.
  const sources = [...before].reverse();
  const lands = (edge: GraphEdge) =>
    edge.targets.length === 0 ? now.has(edge.source) : edge.targets.every((target) => now.has(target));

  for (const source of sources) {
    for (const edge of bySource.get(source) ?? []) {
      if (edge.kind === 'always' || !eventMatches(edge.eventType, eventType)) continue;
      if (lands(edge)) return [edge.id];
      const chain = throughTransients(edge, bySource, now);
      if (chain) return chain;
    }
  }
  // Only eventless moves (a snapshot after `always` transitions of its own).
  for (const source of sources) {
    for (const edge of bySource.get(source) ?? []) {
      if (edge.kind === 'always' && lands(edge) && !was.has(edge.targets[0] ?? '')) return [edge.id];
    }
  }
  return [];
}

function throughTransients(
  first: GraphEdge,
  bySource: Map<string, GraphEdge[]>,
  now: Set<string>,
): string[] | undefined {
  let frontier: { at: string; path: string[] }[] = first.targets.map((at) => ({ at, path: [first.id] }));
  for (let depth = 0; depth < 6 && frontier.length > 0; depth++) {
    const next: typeof frontier = [];
    for (const { at, path } of frontier) {
      for (const edge of bySource.get(at) ?? []) {
        if (edge.kind !== 'always') continue;
        if (edge.targets.length > 0 && edge.targets.every((target) => now.has(target)))
          return [...path, edge.id];
        for (const target of edge.targets) next.push({ at: target, path: [...path, edge.id] });
      }
    }
    frontier = next;
  }
  return undefined;
}

/** XState descriptor matching: exact, `*`, or a `prefix.*` wildcard. */
export function eventMatches(descriptor: string, eventType: string): boolean {
  if (descriptor === eventType || descriptor === '*') return true;
  if (descriptor.endsWith('.*')) return eventType.startsWith(descriptor.slice(0, -1));
  return false;
}
