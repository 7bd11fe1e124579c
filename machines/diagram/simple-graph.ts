import type { GraphEdge, GraphModel, GraphState } from './graph-model.ts';

/**
 * The chart people read (issue 15, docs/inspection.md §Simple view): the states a run rests in
 * (planning, validating, executing, awaiting.*, resuming, finalizing, the final states), with
 * the transient states folded into the edges that pass through them.
 *
 * Derived from the graph model, never drawn by hand, so it follows the machine:
 *
 * | in the machine | in the simple view |
 * |---|---|
 * | a transient state (atomic, invokes nothing, left only by `always` transitions: `admitting`, `routing`, `awaiting.approved`) | gone; an edge into it becomes one edge per way out, labelled with the guard that decided (`done(plan) [planHasToolCalls] → [needsConfirmation]`) |
 * | a compound state whose initial child is transient (`validating`, `resuming`: a check, then maybe a policy consultation) | one state; its inner edges are gone, edges to or from its children start or end at it |
 * | anything else | as it is |
 *
 * Ways between the same two states are one edge (its label lists the events and the deciding
 * guards). Each simple edge keeps the ways it stands for (`via`: lists of the machine's edge
 * ids), so a page highlights it when the run took one of them; a state hidden inside a folded compound shows as
 * that compound (see {@link simpleStateOf}).
 */
export interface SimpleGraph {
  graph: GraphModel;
  /**
   * Simple edge id (`<source>><target>`) → the ways it stands for: each a list of the machine's
   * edge ids, in the order a run takes them.
   */
  via: Record<string, string[][]>;
  /** Machine state id → the simple state id it shows as (absent for states folded into edges). */
  shownAs: Record<string, string>;
}

export function toSimpleGraph(model: GraphModel): SimpleGraph {
  const byId = new Map(model.states.map((state) => [state.id, state]));
  const outgoing = new Map<string, GraphEdge[]>();
  for (const edge of model.edges) outgoing.set(edge.source, [...(outgoing.get(edge.source) ?? []), edge]);
  const transient = new Set(
    model.states
      .filter((state) => {
        if (state.children.length > 0 || state.type === 'final' || state.invoke.length > 0) return false;
        const own = outgoing.get(state.id) ?? [];
        return own.length > 0 && own.every((edge) => edge.kind === 'always');
      })
      .map((state) => state.id),
  );
  const folded = new Set(
    model.states
      .filter((state) => state.parent !== null && state.initial !== null && transient.has(state.initial))
      .map((state) => state.id),
  );
  /** The visible state a machine state shows as; undefined when it is transient (outside folds). */
  const shown = (id: string): string | undefined => {
    for (
      let at: GraphState | undefined = byId.get(id);
      at;
      at = at.parent ? byId.get(at.parent) : undefined
    ) {
      if (folded.has(at.id)) return at.id;
    }
    return transient.has(id) ? undefined : id;
  };

  const states: GraphState[] = [];
  const shownAs: Record<string, string> = {};
  for (const state of model.states) {
    const as = shown(state.id);
    if (as !== undefined) shownAs[state.id] = as;
    if (as !== state.id) continue;
    states.push(
      folded.has(state.id)
        ? {
            ...state,
            type: 'atomic',
            initial: null,
            children: [],
            invoke: [...new Set(descendantInvokes(state.id))],
          }
        : { ...state, children: state.children.filter((child) => shown(child) === child) },
    );
  }
  function descendantInvokes(id: string): { id: string; src: string }[] {
    const state = byId.get(id)!;
    return [...state.invoke, ...state.children.flatMap(descendantInvokes)];
  }

  /** Where an edge into `target` ends up: through transient states, one way per always edge. */
  const ways = (
    target: string,
    guards: string[],
    via: string[],
    seen: Set<string>,
  ): { to: string; guards: string[]; via: string[] }[] => {
    const as = shown(target);
    if (as !== undefined) return [{ to: as, guards, via }];
    if (seen.has(target)) return [];
    const next = new Set(seen).add(target);
    return (outgoing.get(target) ?? []).flatMap((edge) =>
      edge.targets.flatMap((to) =>
        ways(to, edge.guard ? [...guards, edge.guard] : guards, [...via, edge.id], next),
      ),
    );
  };

  // One edge per source and target: the ways between two states, merged (events and deciding
  // guards listed), so the chart has as many arrows as a person draws.
  const merged = new Map<string, { edge: GraphEdge; labels: string[]; guards: string[]; ways: string[][] }>();
  for (const edge of model.edges) {
    const source = shown(edge.source);
    if (source === undefined) continue; // a transient state: folded into the edges into it
    const routes = edge.targets.flatMap((to) =>
      ways(to, edge.guard ? [edge.guard] : [], [edge.id], new Set()),
    );
    for (const route of routes) {
      if (route.to === source && folded.has(source)) continue; // inside a folded state
      const key = `${source}>${route.to}`;
      let entry = merged.get(key);
      if (!entry) {
        entry = { edge, labels: [], guards: [], ways: [] };
        merged.set(key, entry);
      }
      if (!entry.labels.includes(edge.label)) entry.labels.push(edge.label);
      const guard = route.guards.join(' → ');
      if (guard && !entry.guards.includes(guard)) entry.guards.push(guard);
      entry.ways.push(route.via);
    }
  }
  const edges: GraphEdge[] = [];
  const via: Record<string, string[][]> = {};
  for (const [key, { edge, labels, guards, ways: routes }] of merged) {
    const [source, target] = key.split('>') as [string, string];
    const id = `${source}>${target}`;
    via[id] = routes;
    // The label is what decided: the guards, or the event when none did. The events and every
    // guard are in the edge's tooltip (`events`).
    const shortGuards =
      guards.length > 2 ? `${guards.slice(0, 2).join(', ')} +${guards.length - 2}` : guards.join(', ');
    const events = labels.filter((label) => label !== 'always');
    const simple: GraphEdge = {
      ...edge,
      // A folded check is no `always` hop for a reader: the edge is drawn solid.
      kind: edge.kind === 'always' ? 'event' : edge.kind,
      id,
      source,
      targets: [target],
      label: shortGuards || events.join(' | ') || 'always',
      index: edges.length,
      actions: [],
      description: `${events.join(' | ') || 'always'}${guards.length > 0 ? ` [${guards.join(', ')}]` : ''}`,
    };
    delete simple.guard;
    edges.push(simple);
  }
  return { graph: { ...model, states, edges }, via, shownAs };
}

/** The simple-view state a machine state id shows as, or undefined (a folded transient state). */
export function simpleStateOf(simple: SimpleGraph, stateId: string): string | undefined {
  return simple.shownAs[stateId];
}
