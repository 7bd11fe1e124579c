import { SVG_STYLE, xml } from '../machines/diagram/svg.ts';
import type { RunPage } from './inspection-store.ts';
import { PAGE_STYLE } from './inspector-page-style.ts';
import type { PageConfig } from './page/config.ts';
import { PAGE_SCRIPT } from './page-bundle.ts';

export interface InspectorPageOptions {
  /** The full chart, drawn without its own `<style>` (`toSvg(graph, { embedStyle: false })`). */
  svg: string;
  /** The simple view (`toSimpleGraph`), drawn the same way, with its maps to the full chart. */
  simple?: {
    svg: string;
    via: Record<string, string[][]>;
    shownAs: Record<string, string>;
    /** What decided each way of `via` (the label of a taken arrow). */
    wayLabels?: Record<string, string[]>;
  };
  /** Per-response CSP nonce for the one `<style>` and the one `<script>`. */
  nonce: string;
  machineId: string;
  title?: string;
  /** Whether the page may answer waiting runs (attached to a runtime and not read-only). */
  canAnswer?: boolean;
  /** Whether the page may fork runs (attached to a runtime that forks, not read-only). */
  canFork?: boolean;
  /** A Jaeger UI to link runs' traces to. */
  jaegerUrl?: string;
  /**
   * The first page of runs (the `hello`'s), drawn by the script as it starts, before its event
   * stream answers; the stream's `hello` then replaces it.
   */
  runs?: RunPage;
}

/**
 * The inspector's single page (issue 8 §3, issue 15; docs/inspection.md §Page): self-contained
 * HTML, CSS and JS, no external request (the CSP the server sends forbids them). The script reads
 * `location.search`'s token, opens `/events` (Server-Sent Events: `hello` with a page of run
 * summaries, then `run`, `update`, `removed`, and the opened run's `log` and `context`; `dropped`
 * when the server ends the stream, shown with its reason) and shows:
 *
 * - the runs, newest first, a page at a time (older pages on request), filtered by status and
 *   text (run id, agent, labels) on the server;
 * - the chart, simple view by default (the full chart a toggle away), with zoom (wheel, buttons,
 *   fit) and pan (drag), the active state and the last transition highlighted;
 * - why a run failed, was canceled or was capped (its error's name, message and causes, and the
 *   step where it happened), above its chart;
 * - what a waiting run awaits, with a form to answer it (when allowed; a confirmation's inputs
 *   editable, sent as `edits`), errors inline (a refused edit's hint by its call);
 * - a timeline of the run's tool calls by turn (duration, outcome, hint), each openable;
 * - the event log, its newest entries (earlier ones fetched a page at a time); selecting an entry shows the chart and context as they
 *   were then (time travel, `/api/runs/:key/frame`).
 *
 * Everything from the server is written with `textContent`, never parsed as HTML.
 */
export function inspectorPage(options: InspectorPageOptions): string {
  const title = options.title ?? `toolwarden inspector · ${options.machineId}`;
  const config: PageConfig = {
    canAnswer: options.canAnswer === true,
    canFork: options.canFork === true,
    jaegerUrl: options.jaegerUrl ?? null,
    via: options.simple?.via ?? null,
    shownAs: options.simple?.shownAs ?? null,
    wayLabels: options.simple?.wayLabels ?? null,
  };
  const views = options.simple
    ? `<div class="view" data-view="simple">${options.simple.svg}</div><div class="view" data-view="full" hidden>${options.svg}</div>`
    : `<div class="view" data-view="full">${options.svg}</div>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="data:,">
<title>${xml(title)}</title>
<style nonce="${options.nonce}">${PAGE_STYLE}${SVG_STYLE}</style>
</head>
<body data-machine-id="${xml(options.machineId)}">
<header>
  <h1>toolwarden <span>inspector</span></h1>
  <span class="machine">machine <code>${xml(options.machineId)}</code></span>
  <span id="connection" class="connection" data-state="connecting" role="status">connecting…</span>
</header>
<main>
  <aside id="runs-panel" aria-label="Runs">
    <h2>Runs <span id="run-count" class="count"></span></h2>
    <div class="filters">
      <input id="run-filter" type="search" placeholder="run id, agent, label, session=…" aria-label="Filter runs">
      <select id="status-filter" aria-label="Status">
        <option value="">all</option><option>running</option><option>awaiting</option><option>completed</option><option>failed</option><option>canceled</option>
      </select>
    </div>
    <div class="follow-row"><label class="follow"><input type="checkbox" id="follow" checked> follow newest</label> <button type="button" id="show-newer" class="newer" hidden></button> <button type="button" id="compare-picked" class="newer" hidden>compare picked</button></div>
    <div id="dropped" class="dropped" role="alert" hidden><span id="dropped-reason"></span> <button type="button" id="dropped-reconnect">reconnect now</button></div>
    <ul id="run-list"><li class="empty">Loading runs…</li></ul>
  </aside>
  <section id="chart-panel" aria-label="State chart">
    <div class="toolbar">
      <span id="run-title">no run selected</span>
      <button type="button" id="copy-id" class="copy" aria-label="Copy the run id" title="Copy the run id" hidden>copy id</button>
      <button type="button" id="run-session" class="copy" title="List the runs of this session" hidden></button>
      <span id="run-status" class="badge" data-status="none">–</span>
      <span id="run-state" class="state-name"></span>
      <span class="spacer"></span>
      <span id="last-transition" class="transition"></span>
    </div>
    <div id="lineage" class="lineage" hidden></div>
    <div id="outcome" class="outcome" role="status" hidden>
      <div class="outcome-head"><span id="outcome-kind" class="badge"></span> <code id="outcome-error"></code> <span id="outcome-step"></span></div>
      <div id="outcome-message"></div>
      <ol id="outcome-causes"></ol>
    </div>
    <div class="toolbar secondary">
      <div class="segmented" role="group" aria-label="Chart view">
        <button type="button" id="view-simple" aria-pressed="true"${options.simple ? '' : ' disabled'}>simple</button>
        <button type="button" id="view-full" aria-pressed="${options.simple ? 'false' : 'true'}">full</button>
      </div>
      <button type="button" id="zoom-out" aria-label="Zoom out">−</button>
      <button type="button" id="zoom-in" aria-label="Zoom in">+</button>
      <button type="button" id="zoom-fit">fit</button>
      <button type="button" id="zoom-actual">1:1</button>
      <span id="zoom-level" class="count"></span>
      <span class="spacer"></span>
      <span id="travel" class="travel" hidden><span id="travel-text"></span> <button type="button" id="travel-live">back to live</button></span>
    </div>
    <div id="viewport" tabindex="0" aria-label="Chart: drag to pan, wheel or +/- to zoom, 0 to fit"><div id="canvas">${views}</div></div>
  </section>
  <section id="compare-panel" aria-label="Compare runs" hidden>
    <div class="toolbar"><strong>compare</strong> <span id="compare-a" class="run-id"></span> ↔ <span id="compare-b" class="run-id"></span><span class="spacer"></span><button type="button" id="compare-close">close</button></div>
    <p id="compare-verdict" role="status"></p>
    <ul id="compare-totals"></ul>
    <p id="compare-not" class="count"></p>
    <div id="compare-scroll"><table id="compare-table"><thead><tr><th scope="col">step</th><th scope="col"></th><th scope="col">first run</th><th scope="col">second run</th></tr></thead><tbody id="compare-body"></tbody></table></div>
  </section>
  <section id="details-panel" aria-label="Run details">
    <div id="await-panel" hidden>
      <h2>Awaiting</h2>
      <div id="await-body"></div>
      <p id="answer-error" class="error" role="alert" hidden></p>
    </div>
    <h2>Timeline <span id="timeline-count" class="count"></span></h2>
    <ol id="timeline"></ol>
    <pre id="timeline-detail" hidden></pre>
    <h2>Event log <span id="log-count" class="count"></span></h2>
    <button type="button" id="log-earlier" hidden>show earlier entries</button>
    <ol id="event-log"></ol>
    <h2>Context <span id="context-when" class="count"></span></h2>
    <pre id="context">–</pre>
  </section>
</main>
<script type="application/json" id="inspector-config">${jsonForScript(config)}</script>
<script type="application/json" id="inspector-runs">${jsonForScript(options.runs ?? null)}</script>
<script nonce="${options.nonce}">${PAGE_SCRIPT}</script>
</body>
</html>
`;
}

/** JSON safe inside `<script>`: `<` escaped, so no `</script>` can close it. */
function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}
