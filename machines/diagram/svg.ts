import type { ElkPoint } from 'elkjs/lib/elk-api.js';
import { type DiagramLayout, EDGE_LINE_HEIGHT, FONT, type LayoutOptions, layoutGraph } from './elk-layout.ts';
import type { GraphEdge, GraphModel, GraphState } from './graph-model.ts';

/** Options of {@link toSvg}. */
export interface SvgOptions extends LayoutOptions {
  /**
   * Embed a `<style>` element (default true), so the file reads well on its own. The inspector
   * page passes false and styles the chart with its own stylesheet (one CSP nonce, one theme).
   */
  embedStyle?: boolean;
  /** The `<title>` of the drawing. Default: `<machine id> state machine`. */
  title?: string;
  /**
   * Dash the border of transient states (only `always` transitions out). Default true; false
   * for a derived graph whose edges were changed (the simple view has no transient states).
   */
  markTransient?: boolean;
  /** Classes added to the `<svg>` element besides `tw-chart`. */
  className?: string;
}

/**
 * Draws a graph model as SVG, laid out by ELK (issue 8 §2). Every state is a
 * `<g data-state-id="run.awaiting.clarification">` with a rounded rect (final states have a
 * double border, transient states — only `always` transitions out — a dashed one); every
 * transition is one `<g data-edge-id="run.planning:done.invoke.plan:3">` holding its path(s)
 * and its label (`event` / `[guard]`). Initial states are pointed at by a dot and an arrow.
 * The inspector page toggles `active` on states and `taken` on edges.
 */
export async function toSvg(graph: GraphModel, options: SvgOptions = {}): Promise<string> {
  return renderSvg(graph, await layoutGraph(graph, options), options);
}

/** Renders an already computed layout (see {@link layoutGraph}). */
export function renderSvg(graph: GraphModel, layout: DiagramLayout, options: SvgOptions = {}): string {
  const states = new Map(graph.states.map((state) => [state.id, state]));
  const edges = new Map(graph.edges.map((edge) => [edge.id, edge]));
  const transient = options.markTransient === false ? new Set<string>() : transientStates(graph);
  const out: string[] = [];
  const title = options.title ?? `${graph.machineId} state machine`;
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" class="tw-chart${options.className ? ` ${xml(options.className)}` : ''}" viewBox="0 0 ${layout.width} ${layout.height}" width="${layout.width}" height="${layout.height}" role="img" aria-label="${xml(title)}" data-machine-id="${xml(graph.machineId)}">`,
    `<title>${xml(title)}</title>`,
    '<defs>',
    '<marker id="tw-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="tw-arrowhead"/></marker>',
    '<marker id="tw-arrow-taken" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="tw-arrowhead-taken"/></marker>',
    '</defs>',
  );
  if (options.embedStyle !== false) out.push(`<style>${SVG_STYLE}</style>`);

  out.push('<g class="tw-states">');
  for (const box of layout.states) {
    const state = states.get(box.id)!;
    const classes = ['state', box.compound ? 'compound' : 'atomic', `type-${state.type}`];
    if (state.parent === null) classes.push('root');
    if (transient.has(state.id)) classes.push('transient');
    out.push(
      `<g data-state-id="${xml(state.id)}" data-state-type="${state.type}" class="${classes.join(' ')}">`,
      `<title>${xml(stateTooltip(state))}</title>`,
      `<rect class="state-box" x="${n(box.x)}" y="${n(box.y)}" width="${n(box.width)}" height="${n(box.height)}" rx="10" ry="10"/>`,
    );
    if (state.type === 'final') {
      out.push(
        `<rect class="state-final-ring" x="${n(box.x + 3.5)}" y="${n(box.y + 3.5)}" width="${n(box.width - 7)}" height="${n(box.height - 7)}" rx="7" ry="7"/>`,
      );
    }
    const lines = 1 + box.details.length;
    const textX = box.compound ? box.x + 14 : box.x + box.width / 2;
    const anchor = box.compound ? 'start' : 'middle';
    const top = box.compound
      ? box.y + layout.stateFontSize + 7
      : box.y + box.height / 2 - ((lines - 1) * 14) / 2 + (layout.stateFontSize * 4.5) / 13;
    out.push(
      `<text class="state-title" x="${n(textX)}" y="${n(top)}" text-anchor="${anchor}" font-size="${layout.stateFontSize}">${xml(box.title)}</text>`,
    );
    box.details.forEach((line, index) => {
      out.push(
        `<text class="state-detail" x="${n(textX)}" y="${n(top + 14 * (index + 1))}" text-anchor="${anchor}" font-size="${FONT.detail}">${xml(line)}</text>`,
      );
    });
    out.push('</g>');
  }
  out.push('</g>');

  out.push('<g class="tw-initials">');
  for (const marker of layout.initials) {
    out.push(
      `<g class="initial" data-initial-of="${xml(marker.of)}">`,
      `<circle cx="${n(marker.cx)}" cy="${n(marker.cy)}" r="${marker.r}"/>`,
      `<path d="${pathData(marker.path)}" marker-end="url(#tw-arrow)"/>`,
      '</g>',
    );
  }
  out.push('</g>');

  out.push('<g class="tw-edges">');
  for (const route of layout.edges) {
    const edge = edges.get(route.id)!;
    out.push(
      `<g data-edge-id="${xml(edge.id)}" data-source="${xml(edge.source)}" data-targets="${xml(edge.targets.join(' '))}" class="edge kind-${edge.kind.replace('.', '-')}">`,
      `<title>${xml(edgeTooltip(edge))}</title>`,
    );
    for (const path of route.paths) {
      out.push(`<path class="edge-path" d="${pathData(path)}" marker-end="url(#tw-arrow)"/>`);
    }
    if (!route.label && options.edgeLabels === 'float' && route.paths[0]) {
      // Centered on the edge's longest segment; the page shows it on demand.
      const [x, y] = midpoint(route.paths[0]);
      const width = edge.label.length * FONT.edge * 0.6 + 8;
      out.push(
        '<g class="edge-float">',
        `<rect class="edge-label-bg" x="${n(x - width / 2)}" y="${n(y - 8)}" width="${n(width)}" height="16" rx="3" ry="3"/>`,
        `<text class="edge-label edge-event" x="${n(x)}" y="${n(y + 4)}" text-anchor="middle" font-size="${FONT.edge}">${xml(edge.label)}</text>`,
        '</g>',
      );
    }
    if (route.label) {
      const { x, y, width, height, lines } = route.label;
      out.push(
        `<rect class="edge-label-bg" x="${n(x)}" y="${n(y)}" width="${n(width)}" height="${n(height)}" rx="3" ry="3"/>`,
      );
      lines.forEach((line, index) => {
        const cls = index === 0 ? 'edge-event' : 'edge-guard';
        out.push(
          `<text class="edge-label ${cls}" x="${n(x + width / 2)}" y="${n(y + 2 + EDGE_LINE_HEIGHT * (index + 1) - 3.5)}" text-anchor="middle" font-size="${FONT.edge}">${xml(line)}</text>`,
        );
      });
    }
    out.push('</g>');
  }
  out.push('</g>', '</svg>');
  return `${out.join('\n')}\n`;
}

/**
 * Styles shared by the standalone SVG and the inspector page. Labels use a monospace font
 * because the layout estimates text widths at 0.6em per character.
 */
export const SVG_STYLE = `
.tw-chart { font-family: ui-sans-serif, system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
.tw-chart .state-box { fill: #ffffff; stroke: #64748b; stroke-width: 1.4; }
.tw-chart .state.compound > .state-box { fill: #f8fafc; stroke: #94a3b8; }
.tw-chart .state.transient > .state-box { stroke-dasharray: 5 3; }
.tw-chart .state-final-ring { fill: none; stroke: #64748b; stroke-width: 1.2; }
.tw-chart .state-title { font-weight: 600; fill: #0f172a; }
.tw-chart .state-detail { fill: #475569; font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
.tw-chart .initial circle { fill: #334155; }
.tw-chart .initial path { fill: none; stroke: #334155; stroke-width: 1.2; }
.tw-chart .edge-path { fill: none; stroke: #94a3b8; stroke-width: 1.2; }
.tw-chart .edge.kind-always .edge-path { stroke-dasharray: 4 3; }
.tw-chart .tw-arrowhead { fill: #94a3b8; }
.tw-chart .tw-arrowhead-taken { fill: #ea580c; }
.tw-chart .edge-label-bg { fill: #ffffff; fill-opacity: 0.92; }
.tw-chart .edge-label { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; fill: #334155; }
.tw-chart .edge-guard { fill: #7c3aed; }
.tw-chart .state.active > .state-box { fill: #dbeafe; stroke: #2563eb; stroke-width: 2.6; }
.tw-chart .state.compound.active > .state-box { fill: #eff6ff; }
.tw-chart .state.root.active > .state-box { fill: #f8fafc; stroke: #94a3b8; stroke-width: 1.4; }
.tw-chart .state.root.active > .state-title { fill: #0f172a; }
.tw-chart .state.active > .state-title { fill: #1d4ed8; }
.tw-chart .edge.taken .edge-path { stroke: #ea580c; stroke-width: 2.6; marker-end: url(#tw-arrow-taken); }
.tw-chart .edge.taken .edge-label-bg { fill: #ffedd5; fill-opacity: 1; }
.tw-chart .edge.taken .edge-label { fill: #9a3412; font-weight: 600; }
.tw-chart .edge-float { display: none; }
.tw-chart .edge:hover .edge-float, .tw-chart .edge.taken .edge-float, .tw-chart.labels-on .edge-float { display: inline; }
.tw-chart .edge { cursor: default; }
`;

/** States left only by `always` transitions and invoking nothing: the run never rests there. */
function transientStates(graph: GraphModel): Set<string> {
  const out = new Set<string>();
  for (const state of graph.states) {
    if (state.children.length > 0 || state.type === 'final' || state.invoke.length > 0) continue;
    const own = graph.edges.filter((edge) => edge.source === state.id);
    if (own.length > 0 && own.every((edge) => edge.kind === 'always')) out.add(state.id);
  }
  return out;
}

function stateTooltip(state: GraphState): string {
  const parts = [`${state.id} (${state.type})`];
  if (state.invoke.length) parts.push(`invoke: ${state.invoke.map((def) => def.src).join(', ')}`);
  if (state.entry.length) parts.push(`entry: ${state.entry.join(', ')}`);
  if (state.exit.length) parts.push(`exit: ${state.exit.join(', ')}`);
  if (state.tags.length) parts.push(`tags: ${state.tags.join(', ')}`);
  return parts.join('\n');
}

function edgeTooltip(edge: GraphEdge): string {
  if (edge.description !== undefined)
    return `${edge.description}\n${edge.source} → ${edge.targets.join(', ')}`;
  const guard = edge.guard ? ` [${edge.guard}]` : '';
  const actions = edge.actions.length ? ` / ${edge.actions.join(', ')}` : '';
  const targets = edge.targets.length ? edge.targets.join(', ') : '(no target)';
  return `${edge.label}${guard}${actions}\n${edge.source} → ${targets}\n${edge.id}`;
}

/** The middle of a path's longest segment. */
function midpoint(points: ElkPoint[]): [number, number] {
  let best: [number, number] = [points[0]?.x ?? 0, points[0]?.y ?? 0];
  let longest = -1;
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1]!;
    const b = points[i]!;
    const length = Math.hypot(b.x - a.x, b.y - a.y);
    if (length > longest) {
      longest = length;
      best = [(a.x + b.x) / 2, (a.y + b.y) / 2];
    }
  }
  return best;
}

function pathData(points: ElkPoint[]): string {
  return points.map((point, index) => `${index === 0 ? 'M' : 'L'}${n(point.x)},${n(point.y)}`).join(' ');
}

function n(value: number): string {
  return String(Math.round(value * 10) / 10);
}

/** Escapes text and attribute values. */
export function xml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}
