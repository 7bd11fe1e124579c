import type {
  ELKConstructorArguments,
  ELK as ElkApi,
  ElkExtendedEdge,
  ElkLabel,
  ElkNode,
  ElkPoint,
} from 'elkjs/lib/elk-api.js';
import type { GraphEdge, GraphModel, GraphState } from './graph-model.ts';

/** Font sizes (px) the layout measures with and the SVG draws with. */
export const FONT = { state: 13, detail: 10.5, edge: 11 } as const;

/** A laid-out state: absolute box (px, origin top-left) and the lines drawn in it. */
export interface StateBox {
  id: string;
  x: number;
  y: number;
  width: number;
  height: number;
  /** Has children: its title sits at the top, its children inside. */
  compound: boolean;
  title: string;
  /** Smaller lines under the title: `invoke plan`, `#tag`. */
  details: string[];
}

/** A laid-out transition: one polyline per target (parallel transitions have several). */
export interface EdgeRoute {
  id: string;
  /** Absolute points, start to end. */
  paths: ElkPoint[][];
  /** Label lines (`event`, `[guard]`) and the box they sit in. */
  label: { lines: string[]; x: number; y: number; width: number; height: number } | null;
}

/** The dot-and-arrow that points at a compound state's initial child. */
export interface InitialMarker {
  /** The compound state whose initial child this marks. */
  of: string;
  cx: number;
  cy: number;
  r: number;
  path: ElkPoint[];
}

export interface DiagramLayout {
  width: number;
  height: number;
  /** Font size of state titles, px (`LayoutOptions.stateFontSize`). */
  stateFontSize: number;
  states: StateBox[];
  edges: EdgeRoute[];
  initials: InitialMarker[];
}

/** ELK layout options of an SVG diagram. */
export interface LayoutOptions {
  /** `DOWN` (default) or `RIGHT`. */
  direction?: 'DOWN' | 'RIGHT';
  /** Extra ELK layout options for the root (`elk.*` keys). */
  elk?: Record<string, string>;
  /**
   * `layout` (default): edge labels are placed by ELK and take room in the drawing. `float`:
   * the layout ignores them (a much smaller drawing) and the SVG floats each label on its edge,
   * shown on demand (the inspector's simple view: on hover, when zoomed in, on the taken edge).
   */
  edgeLabels?: 'layout' | 'float';
  /** Font size of state titles, px. Default 13. */
  stateFontSize?: number;
  /** Draw invoked actors and tags under state titles (default true). */
  details?: boolean;
}

// elkjs is CommonJS and sets `default` on its export; either shape is the constructor.
type ElkConstructor = new (args?: ELKConstructorArguments) => ElkApi;

/**
 * elkjs (7.9 MB, an optional peer of the package) is loaded on the first SVG layout only, so
 * Mermaid, the graph model and the inspector's recording never pay for it.
 */
async function loadElk(): Promise<ElkConstructor> {
  const ELK = await import('elkjs/lib/elk.bundled.js').catch((error: unknown) => {
    if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new Error("SVG diagrams need elkjs, an optional peer dependency: npm install 'elkjs@^0.12.1'", {
      cause: error,
    });
  });
  const module = ELK as unknown as { default?: { default?: ElkConstructor } & ElkConstructor };
  return (module.default?.default ?? module.default ?? ELK) as unknown as ElkConstructor;
}

/**
 * Lays out a graph model with ELK's layered algorithm (issue 8 §2). Compound states are ELK
 * nodes with children and `elk.hierarchyHandling: INCLUDE_CHILDREN`, so transitions that cross
 * a compound's border are routed in one pass. Coordinates come back absolute
 * (`elk.json.shapeCoords/edgeCoords: ROOT`).
 *
 * Text is measured with a width estimate per character (no browser here): labels use a
 * monospace font in the SVG so the estimate holds.
 */
export async function layoutGraph(graph: GraphModel, options: LayoutOptions = {}): Promise<DiagramLayout> {
  const states = new Map(graph.states.map((state) => [state.id, state]));
  const stateFontSize = options.stateFontSize ?? FONT.state;
  const detailsOf = (state: GraphState) =>
    options.details === false
      ? []
      : [...state.invoke.map((def) => `invoke ${def.src}`), ...state.tags.map((tag) => `#${tag}`)];

  // Read per compound node: ELK lays out each hierarchy level with its own options, even with
  // INCLUDE_CHILDREN (edges are moved to the container of their ends).
  const shared: Record<string, string> = {
    'elk.algorithm': 'layered',
    'elk.direction': options.direction ?? 'DOWN',
    'elk.edgeRouting': 'ORTHOGONAL',
    // Straighter, more compact than the default (BRANDES_KOEPF) on the run machine: 2285×1784 vs 3091×1858.
    'elk.layered.nodePlacement.strategy': 'NETWORK_SIMPLEX',
    'elk.layered.spacing.nodeNodeBetweenLayers': '36',
    'elk.layered.spacing.edgeNodeBetweenLayers': '16',
    'elk.layered.spacing.edgeEdgeBetweenLayers': '10',
    'elk.spacing.nodeNode': '28',
    'elk.spacing.edgeNode': '14',
    'elk.spacing.edgeEdge': '10',
    'elk.spacing.edgeLabel': '3',
    ...options.elk,
  };
  const nodeOf = (state: GraphState): ElkNode => {
    const details = detailsOf(state);
    const titleWidth = textWidth(state.key, stateFontSize, 'sans-bold');
    const detailWidth = Math.max(0, ...details.map((line) => textWidth(line, FONT.detail, 'mono')));
    const labelWidth = Math.max(titleWidth, detailWidth);
    const labelHeight = stateFontSize + 5 + details.length * 14;
    if (state.children.length === 0) {
      return {
        id: state.id,
        width: Math.max(96, Math.ceil(labelWidth + 28)),
        height: Math.max(36, labelHeight + 16),
      };
    }
    const children: ElkNode[] = state.children.map((id) => nodeOf(states.get(id)!));
    if (state.initial) children.unshift({ id: initialId(state.id), width: 12, height: 12 });
    return {
      id: state.id,
      children,
      labels: [{ text: state.key, width: labelWidth, height: labelHeight }],
      layoutOptions: {
        ...shared,
        'elk.padding': `[top=${labelHeight + 22},left=16,bottom=16,right=16]`,
        'elk.nodeLabels.placement': '[H_LEFT, V_TOP, INSIDE]',
        ...(state.type === 'parallel' ? { 'elk.direction': 'RIGHT' } : {}),
      },
    };
  };

  const edges: ElkExtendedEdge[] = [];
  for (const edge of graph.edges) {
    const lines = labelLines(edge);
    const targets = edge.targets.length > 0 ? edge.targets : [edge.source];
    targets.forEach((target, index) => {
      edges.push({
        id: `${edge.id}#${index}`,
        sources: [edge.source],
        targets: [target],
        // One label per transition, on its first path.
        labels: index === 0 && options.edgeLabels !== 'float' ? [labelBox(lines)] : [],
      });
    });
  }
  for (const state of graph.states) {
    if (state.initial && state.children.length > 0) {
      edges.push({ id: initialEdgeId(state.id), sources: [initialId(state.id)], targets: [state.initial] });
    }
  }

  const root: ElkNode = {
    id: '__diagram',
    children: [nodeOf(states.get(graph.root)!)],
    edges,
    layoutOptions: {
      ...shared,
      'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
      'elk.padding': '[top=12,left=12,bottom=12,right=12]',
      'elk.json.shapeCoords': 'ROOT',
      'elk.json.edgeCoords': 'ROOT',
    },
  };

  const Elk = await loadElk();
  const laid = await new Elk().layout(root);
  const boxes: StateBox[] = [];
  const initials: InitialMarker[] = [];
  const initialCenters = new Map<string, { cx: number; cy: number }>();
  const collect = (node: ElkNode) => {
    if (node.id.startsWith('__initial:')) {
      const of = node.id.slice('__initial:'.length);
      initialCenters.set(of, { cx: (node.x ?? 0) + 6, cy: (node.y ?? 0) + 6 });
    } else if (node.id !== '__diagram') {
      const state = states.get(node.id)!;
      boxes.push({
        id: node.id,
        x: node.x ?? 0,
        y: node.y ?? 0,
        width: node.width ?? 0,
        height: node.height ?? 0,
        compound: state.children.length > 0,
        title: state.key,
        details: detailsOf(state),
      });
    }
    for (const child of node.children ?? []) collect(child);
  };
  collect(laid);

  const routes = new Map<string, EdgeRoute>();
  for (const edge of (laid.edges ?? []) as ElkExtendedEdge[]) {
    const points = (edge.sections ?? []).flatMap((section, index) => [
      ...(index === 0 ? [section.startPoint] : []),
      ...(section.bendPoints ?? []),
      section.endPoint,
    ]);
    if (edge.id.startsWith('__initial-edge:')) {
      const of = edge.id.slice('__initial-edge:'.length);
      const center = initialCenters.get(of);
      if (center) initials.push({ of, ...center, r: 6, path: points });
      continue;
    }
    const id = edge.id.slice(0, edge.id.lastIndexOf('#'));
    const route = routes.get(id) ?? { id, paths: [], label: null };
    route.paths.push(points);
    const label = edge.labels?.[0] as (ElkLabel & { text: string }) | undefined;
    if (label) {
      route.label = {
        lines: label.text.split('\n'),
        x: label.x ?? 0,
        y: label.y ?? 0,
        width: label.width ?? 0,
        height: label.height ?? 0,
      };
    }
    routes.set(id, route);
  }
  return {
    stateFontSize,
    width: Math.ceil(laid.width ?? 0),
    height: Math.ceil(laid.height ?? 0),
    states: boxes,
    edges: graph.edges.map((edge) => routes.get(edge.id) ?? { id: edge.id, paths: [], label: null }),
    initials,
  };
}

/** `event` on the first line and `[guard]` on the second, so long labels stay narrow. */
export function labelLines(edge: GraphEdge): string[] {
  return edge.guard ? [edge.label, `[${edge.guard}]`] : [edge.label];
}

/** Line height of edge labels, px. */
export const EDGE_LINE_HEIGHT = 14;

function labelBox(lines: string[]): ElkLabel {
  return {
    text: lines.join('\n'),
    width: Math.ceil(Math.max(...lines.map((line) => textWidth(line, FONT.edge, 'mono'))) + 8),
    height: lines.length * EDGE_LINE_HEIGHT + 4,
  };
}

function initialId(stateId: string): string {
  return `__initial:${stateId}`;
}

function initialEdgeId(stateId: string): string {
  return `__initial-edge:${stateId}`;
}

/**
 * Width estimate in px: monospace glyphs are 0.6em wide in the common monospace fonts; bold
 * sans-serif averages about 0.62em for identifiers.
 */
export function textWidth(text: string, fontSize: number, font: 'mono' | 'sans-bold'): number {
  return text.length * fontSize * (font === 'mono' ? 0.6 : 0.62);
}
