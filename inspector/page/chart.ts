/**
 * The chart: the two views (simple, full), the active state and the last transition highlighted,
 * zoom (wheel, buttons, keys, fitChart) and pan (drag, arrow keys).
 */
import { pageConfig } from './config.ts';
import { $ } from './dom.ts';
import { fitZoom, type Zoom, zoomAbout } from './fit.ts';

const views = (): HTMLElement[] => Array.from(document.querySelectorAll<HTMLElement>('#canvas .view'));
const viewOf = (name: string): HTMLElement | undefined => views().find((view) => view.dataset.view === name);
const nodesIn = (view: Element | undefined, selector: string): SVGElement[] =>
  view ? Array.from(view.querySelectorAll<SVGElement>(selector)) : [];
let current: HTMLElement | undefined;
const shownView = (): HTMLElement | undefined => {
  current ??= viewOf('simple') ?? viewOf('full');
  return current;
};

/** An edge of the full chart as `event [guard]`: the first line of its tooltip, without actions. */
export function edgeText(id: string): string {
  const edge = nodesIn(viewOf('full'), '[data-edge-id]').find((node) => node.dataset.edgeId === id);
  const title = edge?.querySelector('title');
  if (!title) return id;
  return (title.textContent ?? '').split('\n')[0]!.split(' / ')[0]!;
}

/** Marks the active states and the edges just taken, in both views. */
export function highlight(activeStates: string[], lastTransition: { edgeIds: string[] } | null): void {
  const { shownAs, via, wayLabels } = pageConfig();
  const taken = new Set(lastTransition ? lastTransition.edgeIds : []);
  const fullActive = new Set(activeStates);
  for (const view of views()) {
    const simple = view.dataset.view === 'simple';
    const active = simple
      ? new Set(activeStates.map((id) => shownAs?.[id]).filter((id): id is string => Boolean(id)))
      : fullActive;
    for (const node of nodesIn(view, '[data-state-id]')) {
      node.classList.toggle('active', active.has(node.dataset.stateId ?? ''));
    }
    for (const node of nodesIn(view, '[data-edge-id]')) {
      const id = node.dataset.edgeId ?? '';
      const ways = simple ? (via?.[id] ?? []) : [];
      const way = ways.findIndex((edges) => edges.every((edge) => taken.has(edge)));
      const on = simple ? way >= 0 : taken.has(id);
      node.classList.toggle('taken', on);
      if (simple) labelWay(node, on && wayLabels?.[id] ? (wayLabels[id][way] ?? null) : null);
    }
  }
}

/**
 * A taken arrow of the simple view names the way actually taken (plan.error, not planInvalid);
 * its summary label comes back when another is taken.
 */
function labelWay(node: SVGElement, label: string | null): void {
  const text = node.querySelector<SVGTextElement>('.edge-float text.edge-label');
  if (!text) return;
  if (text.dataset.summary === undefined) text.dataset.summary = text.textContent ?? '';
  const want = label || text.dataset.summary;
  if (text.textContent === want) return;
  text.textContent = want;
  const bg = node.querySelector('.edge-float .edge-label-bg');
  const x = Number(text.getAttribute('x'));
  const width = want.length * Number(text.getAttribute('font-size') || 11) * 0.6 + 8;
  bg?.setAttribute('x', String(x - width / 2));
  bg?.setAttribute('width', String(width));
}

let zoom: Zoom = { scale: 1, x: 0, y: 0 };

function applyZoom(): void {
  $('canvas').style.transform = `translate(${zoom.x}px,${zoom.y}px) scale(${zoom.scale})`;
  const level = $('zoom-level');
  level.textContent = `${Math.round(zoom.scale * 100)}%${zoom.wider ? ' · wider than the view: drag or ← → for the rest' : ''}`;
  level.dataset.wider = String(zoom.wider === true);
  for (const svg of document.querySelectorAll('#canvas svg'))
    svg.classList.toggle('labels-on', zoom.scale >= 1.25);
}

/** The smallest text of a view but its floating edge labels (shown on demand), px. */
function smallestFont(view: HTMLElement | undefined): number {
  const sizes = nodesIn(view, 'text:not(.edge-label)').map(
    (text) => Number(text.getAttribute('font-size')) || 13,
  );
  return sizes.length ? Math.min(...sizes) : 13;
}

/** Fits the chart shown to the viewport ({@link fitZoom}). */
export function fitChart(): void {
  const view = shownView();
  const svg = view?.querySelector('svg');
  if (!svg) return;
  const chart = { width: Number(svg.getAttribute('width')), height: Number(svg.getAttribute('height')) };
  zoom = fitZoom($('viewport').getBoundingClientRect(), chart, smallestFont(view));
  applyZoom();
}

function zoomAt(factor: number, cx: number, cy: number): void {
  zoom = zoomAbout(zoom, factor, cx, cy);
  applyZoom();
}

const center = (): [number, number] => {
  const box = $('viewport').getBoundingClientRect();
  return [box.width / 2, box.height / 2];
};

function pan(dx: number, dy: number): void {
  zoom = { ...zoom, x: zoom.x + dx, y: zoom.y + dy };
  applyZoom();
}

function showView(name: string): void {
  const view = viewOf(name);
  if (!view) return;
  for (const other of views()) other.hidden = other !== view;
  current = view;
  $('view-simple').setAttribute('aria-pressed', String(name === 'simple'));
  $('view-full').setAttribute('aria-pressed', String(name === 'full'));
  fitChart();
}

/** Zoom, pan and view controls; the full chart's floating labels set to `event [guard]`. */
export function setUpChart(): void {
  const viewport = $('viewport');
  $('zoom-in').addEventListener('click', () => zoomAt(1.25, ...center()));
  $('zoom-out').addEventListener('click', () => zoomAt(0.8, ...center()));
  $('zoom-fit').addEventListener('click', fitChart);
  $('zoom-actual').addEventListener('click', () => {
    zoom = { scale: 1, x: 0, y: 0 };
    applyZoom();
  });
  viewport.addEventListener(
    'wheel',
    (event) => {
      event.preventDefault();
      const box = viewport.getBoundingClientRect();
      zoomAt(event.deltaY < 0 ? 1.1 : 1 / 1.1, event.clientX - box.left, event.clientY - box.top);
    },
    { passive: false },
  );
  let drag: { x: number; y: number; zx: number; zy: number } | null = null;
  viewport.addEventListener('pointerdown', (event) => {
    drag = { x: event.clientX, y: event.clientY, zx: zoom.x, zy: zoom.y };
    viewport.classList.add('dragging');
    viewport.setPointerCapture(event.pointerId);
  });
  viewport.addEventListener('pointermove', (event) => {
    if (!drag) return;
    zoom = { ...zoom, x: drag.zx + event.clientX - drag.x, y: drag.zy + event.clientY - drag.y };
    applyZoom();
  });
  const endDrag = () => {
    drag = null;
    viewport.classList.remove('dragging');
  };
  viewport.addEventListener('pointerup', endDrag);
  viewport.addEventListener('pointercancel', endDrag);
  const step = 40;
  const keys = new Map<string, () => void>([
    ['+', () => zoomAt(1.25, ...center())],
    ['=', () => zoomAt(1.25, ...center())],
    ['-', () => zoomAt(0.8, ...center())],
    ['0', fitChart],
    ['ArrowLeft', () => pan(step, 0)],
    ['ArrowRight', () => pan(-step, 0)],
    ['ArrowUp', () => pan(0, step)],
    ['ArrowDown', () => pan(0, -step)],
  ]);
  viewport.addEventListener('keydown', (event) => {
    const act = keys.get(event.key);
    if (!act) return;
    act();
    event.preventDefault();
  });
  for (const node of nodesIn(viewOf('full'), '[data-edge-id]')) {
    const text = node.querySelector<SVGTextElement>('.edge-float text.edge-label');
    if (!text) continue;
    text.dataset.summary = edgeText(node.dataset.edgeId ?? '');
    labelWay(node, null);
  }
  $('view-simple').addEventListener('click', () => showView('simple'));
  $('view-full').addEventListener('click', () => showView('full'));
  new ResizeObserver(() => fitChart()).observe(viewport);
}
