import type { GraphEdge, GraphModel, GraphState } from './graph-model.ts';

/** What {@link toMermaid} draws besides states and transitions. */
export interface MermaidOptions {
  /** `TB` (default) or `LR`. */
  direction?: 'TB' | 'LR';
  /** Print action names after the guard: `event [guard] / a, b`. Default false. */
  actions?: boolean;
}

/**
 * A Mermaid `stateDiagram-v2` of a graph model (issue 8 §2).
 *
 * - Compound states are `state x { … }` blocks with `[*] --> initial`; final states get
 *   `--> [*]` in their parent's block; parallel regions are separated by `--`.
 * - Mermaid ids are global, so nested states get path ids (`awaiting_clarification`) and their
 *   key as label. Each transition is written in the block of the lowest compound state holding
 *   both ends, after the nested blocks: a reference from an outer block never moves a state out
 *   of its composite, in old and new Mermaid versions alike.
 * - Labels read `event [guard]`. Targetless transitions are self-loops.
 * - Transitions on the root (the run machine's `cancel`) leave from a dashed `any state` node:
 *   Mermaid cannot draw an edge from the diagram itself.
 */
export function toMermaid(graph: GraphModel, options: MermaidOptions = {}): string {
  const states = new Map(graph.states.map((state) => [state.id, state]));
  const ids = mermaidIds(graph);
  const anyId = uniqueId(`${ids.get(graph.root) ?? 'root'}_any`, new Set(ids.values()));
  const rootEdges = graph.edges.filter((edge) => edge.source === graph.root);
  const edgesByScope = new Map<string, GraphEdge[]>();
  for (const edge of graph.edges) {
    if (edge.source === graph.root) continue;
    const scope = scopeOf(edge, states, graph.root);
    edgesByScope.set(scope, [...(edgesByScope.get(scope) ?? []), edge]);
  }

  const lines = ['stateDiagram-v2'];
  if (options.direction === 'LR') lines.push('  direction LR');
  lines.push(`  %% ${graph.machineId}: ${graph.states.length} states, ${graph.edges.length} transitions`);
  const label = (edge: GraphEdge) => edgeLabel(edge, options.actions === true);

  const block = (state: GraphState, depth: number) => {
    const pad = '  '.repeat(depth);
    const children = state.children.map((id) => states.get(id)!);
    const writeChild = (child: GraphState) => {
      const id = ids.get(child.id)!;
      if (child.children.length > 0) {
        if (id !== child.key) lines.push(`${pad}state "${text(child.key)}" as ${id}`);
        lines.push(`${pad}state ${id} {`);
        block(child, depth + 1);
        lines.push(`${pad}}`);
      } else if (child.type === 'history') {
        lines.push(`${pad}state "${text(child.key)} (H${child.history === 'deep' ? '*' : ''})" as ${id}`);
      } else {
        lines.push(id === child.key ? `${pad}${id}` : `${pad}state "${text(child.key)}" as ${id}`);
      }
    };
    if (state.type === 'parallel') {
      children.forEach((region, index) => {
        if (index > 0) lines.push(`${pad}--`);
        writeChild(region);
      });
    } else {
      if (state.initial) lines.push(`${pad}[*] --> ${ids.get(state.initial)}`);
      for (const child of children) writeChild(child);
      for (const child of children)
        if (child.type === 'final') lines.push(`${pad}${ids.get(child.id)} --> [*]`);
    }
    for (const edge of edgesByScope.get(state.id) ?? []) {
      const source = ids.get(edge.source)!;
      const targets = edge.targets.length > 0 ? edge.targets.map((id) => ids.get(id)!) : [source];
      for (const target of targets) lines.push(`${pad}${source} --> ${target} : ${label(edge)}`);
    }
  };
  block(states.get(graph.root)!, 1);

  if (rootEdges.length > 0) {
    lines.push(`  state "any state" as ${anyId}`);
    for (const edge of rootEdges) {
      const targets = edge.targets.length > 0 ? edge.targets : [graph.root];
      for (const target of targets) lines.push(`  ${anyId} --> ${ids.get(target) ?? anyId} : ${label(edge)}`);
    }
    lines.push('  classDef anyState stroke-dasharray:4 4,font-style:italic');
    lines.push(`  class ${anyId} anyState`);
  }
  return `${lines.join('\n')}\n`;
}

/** `event [guard]` (and ` / actions` when asked), in characters Mermaid labels accept. */
export function edgeLabel(edge: GraphEdge, withActions = false): string {
  let label = edge.label;
  if (edge.guard) label += ` [${edge.guard}]`;
  if (withActions && edge.actions.length > 0) label += ` / ${edge.actions.join(', ')}`;
  return text(label);
}

/** Mermaid ends a label at `;` or a newline and reads `:` and `#` specially; `"` ends a quoted name. */
function text(value: string): string {
  return value
    .replace(/[;\n\r]/g, ' ')
    .replace(/:/g, '.')
    .replace(/#/g, '')
    .replace(/"/g, "'");
}

const RESERVED = new Set(['state', 'note', 'end', 'direction', 'class', 'classDef', 'style', 'as', 'root']);

/** Global Mermaid ids: the key at the top level, the path joined by `_` below it; unique. */
function mermaidIds(graph: GraphModel): Map<string, string> {
  const ids = new Map<string, string>();
  const used = new Set<string>();
  for (const state of graph.states) {
    const base = state.path.length === 0 ? state.id : state.path.join('_');
    let id = base.replace(/[^A-Za-z0-9_]/g, '_');
    if (/^[0-9]/.test(id) || RESERVED.has(id)) id = `s_${id}`;
    id = uniqueId(id, used);
    used.add(id);
    ids.set(state.id, id);
  }
  return ids;
}

function uniqueId(base: string, used: Set<string>): string {
  let id = base;
  for (let n = 2; used.has(id); n++) id = `${base}_${n}`;
  return id;
}

/** The lowest compound (or parallel) state that contains the edge's source and every target. */
function scopeOf(edge: GraphEdge, states: Map<string, GraphState>, root: string): string {
  const ancestors = (id: string): string[] => {
    const chain: string[] = [];
    for (let state = states.get(id)?.parent; state; state = states.get(state)?.parent) chain.push(state);
    return chain;
  };
  let candidates = ancestors(edge.source);
  for (const target of edge.targets) {
    const own = new Set([target, ...ancestors(target)]);
    candidates = candidates.filter((id) => own.has(id) && id !== target);
  }
  return candidates[0] ?? root;
}
