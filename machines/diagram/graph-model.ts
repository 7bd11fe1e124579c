import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate';
import { runMachine } from '../run-machine.ts';
import { type EdgeKind, edgeEventOf, edgeId } from './edge-id.ts';

/** One state node of a machine (ids as XState writes them: `run.awaiting.clarification`). */
export interface GraphState {
  id: string;
  /** The key in its parent's `states`: `clarification`. */
  key: string;
  /** Keys from the root, root excluded: `['awaiting', 'clarification']`. */
  path: string[];
  parent: string | null;
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  /** The initial child's id, for compound states. */
  initial: string | null;
  history: false | 'shallow' | 'deep';
  /** Document order (XState's `order`): the root is 0. */
  order: number;
  /** Invoked actors: their `src` (a name from `setup({ actors })`, or `inline`) and id. */
  invoke: { id: string; src: string }[];
  tags: string[];
  entry: string[];
  exit: string[];
  description?: string;
  /** Child ids in document order. */
  children: string[];
}

/** One transition. A transition with several targets (parallel) is one edge. */
export interface GraphEdge {
  /** `<source>:<event key>:<index>`; see `edgeIdOf`. */
  id: string;
  source: string;
  kind: EdgeKind;
  /** The raw event descriptor XState matches (`''` for `always`). */
  eventType: string;
  /** What a diagram prints for the event: `cancel`, `done(plan)`, `always`, `after 500ms`. */
  label: string;
  /** Position among the transitions of this source and event: guarded alternatives in priority order. */
  index: number;
  /** The guard's name: `isClarificationAnswer`, `not(isFinal)`; absent when unguarded. */
  guard?: string;
  /** Target state ids; empty for a targetless (self, no re-entry) transition. */
  targets: string[];
  /** Action names in order (`{ type, params }` actions by their type). */
  actions: string[];
  reenter: boolean;
  /** What a derived edge stands for, in words (the simple view's events and guards). */
  description?: string;
  invoke?: string;
  delay?: string | number;
}

/**
 * A machine's states and transitions as plain JSON: what `toolwarden diagram --format json`
 * writes, and what Mermaid and SVG are drawn from. States are in document order; edges are
 * grouped by source in that order, then by event in config order.
 */
export interface GraphModel {
  machineId: string;
  /** The root state id (= machineId). */
  root: string;
  states: GraphState[];
  edges: GraphEdge[];
}

/**
 * Walks a machine from `machine.root` (issue 8 §1). Unlike `machine.toJSON()`, the model keeps
 * `always` transitions, classifies `after`, done and error transitions, and names guards and
 * actions. Implementations supplied with `provide()` do not change the model.
 */
export function toGraphModel(machine: AnyStateMachine = runMachine): GraphModel {
  const states: GraphState[] = [];
  const edges: GraphEdge[] = [];
  const visit = (node: AnyStateNode) => {
    states.push(stateOf(node));
    edges.push(...edgesOf(node));
    for (const child of childrenOf(node)) visit(child);
  };
  visit(machine.root);
  return { machineId: machine.id, root: machine.root.id, states, edges };
}

function childrenOf(node: AnyStateNode): AnyStateNode[] {
  return (Object.values(node.states) as AnyStateNode[]).sort((a, b) => a.order - b.order);
}

function stateOf(node: AnyStateNode): GraphState {
  const state: GraphState = {
    id: node.id,
    key: node.key,
    path: [...node.path],
    parent: node.parent?.id ?? null,
    type: node.type,
    initial: node.type === 'compound' ? (node.initial.target[0]?.id ?? null) : null,
    history: node.history,
    order: node.order,
    invoke: node.invoke.map((def) => ({ id: def.id, src: typeof def.src === 'string' ? def.src : 'inline' })),
    tags: [...node.tags],
    entry: node.entry.map(actionName),
    exit: node.exit.map(actionName),
    children: childrenOf(node).map((child) => child.id),
  };
  if (node.description) state.description = node.description;
  return state;
}

function edgesOf(node: AnyStateNode): GraphEdge[] {
  const groups: [string, readonly AnyTransitionDefinition[]][] = [...node.transitions.entries()];
  if (node.always?.length) groups.push(['', node.always]);
  return groups.flatMap(([eventType, transitions]) => {
    const event = edgeEventOf(node, eventType);
    return transitions.map((transition, index) => {
      const edge: GraphEdge = {
        id: edgeId(node.id, event.key, index),
        source: node.id,
        kind: event.kind,
        eventType,
        label: event.label,
        index,
        targets: (transition.target ?? []).map((target) => target.id),
        actions: transition.actions.map(actionName),
        reenter: transition.reenter,
      };
      const guard = guardName(transition.guard);
      if (guard !== undefined) edge.guard = guard;
      if (event.invoke !== undefined) edge.invoke = event.invoke;
      if (event.delay !== undefined) edge.delay = event.delay;
      return edge;
    });
  });
}

type Named = { type?: unknown; name?: unknown; guards?: unknown[]; check?: unknown };

/** `'name'`, `{ type: 'name' }`, a built-in (`xstate.assign`), or `inline` for an anonymous function. */
export function actionName(action: unknown): string {
  if (typeof action === 'string') return action;
  const named = action as Named;
  if (typeof named?.type === 'string') return named.type;
  if (typeof action === 'function' && typeof named.name === 'string' && named.name) return named.name;
  return 'inline';
}

/** A guard's readable name; higher-order guards read `not(a)`, `and(a, b)`, `or(a, b)`. */
export function guardName(guard: unknown): string | undefined {
  if (guard === undefined || guard === null) return undefined;
  if (typeof guard === 'string') return guard;
  const named = guard as Named;
  if (typeof guard === 'function' && Array.isArray(named.guards) && typeof named.check === 'function') {
    return `${String(named.name)}(${named.guards.map((inner) => guardName(inner) ?? 'inline').join(', ')})`;
  }
  if (typeof named.type === 'string') return named.type;
  if (typeof guard === 'function' && typeof named.name === 'string' && named.name) return named.name;
  return 'inline';
}
