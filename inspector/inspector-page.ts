import { SVG_STYLE, xml } from '../machines/diagram/svg.ts';

export interface InspectorPageOptions {
  /** The chart, drawn without its own `<style>` (`toSvg(graph, { embedStyle: false })`). */
  svg: string;
  /** Per-response CSP nonce for the one `<style>` and the one `<script>`. */
  nonce: string;
  machineId: string;
  title?: string;
}

/**
 * The inspector's single page (issue 8 §3): self-contained HTML, CSS and JS, no external request
 * (the CSP the server sends forbids them). The script reads `location.search`'s token, opens
 * `/events` (Server-Sent Events: `hello`, `run`, `log`, `removed`) and
 *
 * - lists live and recent runs (newest first; the newest is followed until one is clicked),
 * - toggles `active` on `[data-state-id]` and `taken` on `[data-edge-id]` for the selected run,
 * - shows the selected run's event log in order and its sanitized context.
 *
 * Everything from the server is written with `textContent`, never parsed as HTML.
 */
export function inspectorPage(options: InspectorPageOptions): string {
  const title = options.title ?? `toolwarden inspector · ${options.machineId}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>${xml(title)}</title>
<style nonce="${options.nonce}">${PAGE_STYLE}${SVG_STYLE}</style>
</head>
<body data-machine-id="${xml(options.machineId)}">
<header>
  <h1>toolwarden <span>inspector</span></h1>
  <span class="machine">machine <code>${xml(options.machineId)}</code></span>
  <span id="connection" class="connection" data-state="connecting">connecting…</span>
</header>
<main>
  <aside id="runs-panel">
    <h2>Runs</h2>
    <label class="follow"><input type="checkbox" id="follow" checked> follow newest</label>
    <ul id="run-list"><li class="empty">No runs yet.</li></ul>
  </aside>
  <section id="chart-panel">
    <div class="toolbar">
      <span id="run-title">no run selected</span>
      <span id="run-status" class="badge" data-status="none">–</span>
      <span id="run-state" class="state-name"></span>
      <span class="spacer"></span>
      <span id="last-transition" class="transition"></span>
      <button type="button" id="zoom" title="Toggle fit / actual size">1:1</button>
    </div>
    <div id="chart" class="fit">${options.svg}</div>
  </section>
  <section id="details-panel">
    <h2>Event log <span id="log-count" class="count"></span></h2>
    <ol id="event-log"></ol>
    <h2>Context</h2>
    <pre id="context">–</pre>
  </section>
</main>
<script nonce="${options.nonce}">${PAGE_SCRIPT}</script>
</body>
</html>
`;
}

const PAGE_STYLE = `
:root { color-scheme: light; --line: #e2e8f0; --muted: #64748b; --ink: #0f172a; --accent: #2563eb; }
* { box-sizing: border-box; }
html, body { margin: 0; height: 100%; }
body { font: 13px/1.4 ui-sans-serif, system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--ink); background: #f1f5f9; display: flex; flex-direction: column; }
code, pre, .mono { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
header { display: flex; align-items: center; gap: 16px; padding: 8px 16px; background: #0f172a; color: #e2e8f0; }
header h1 { font-size: 15px; margin: 0; font-weight: 700; }
header h1 span { font-weight: 400; color: #94a3b8; }
header .machine code { color: #bfdbfe; }
.connection { margin-left: auto; font-size: 12px; padding: 2px 8px; border-radius: 999px; background: #334155; }
.connection[data-state="open"] { background: #166534; color: #dcfce7; }
.connection[data-state="closed"] { background: #991b1b; color: #fee2e2; }
main { flex: 1; display: grid; grid-template-columns: 230px minmax(0, 1fr) 380px; gap: 10px; padding: 10px; min-height: 0; }
main > * { background: #fff; border: 1px solid var(--line); border-radius: 8px; min-height: 0; overflow: auto; }
h2 { font-size: 12px; text-transform: uppercase; letter-spacing: .06em; color: var(--muted); margin: 12px 12px 6px; }
.count { text-transform: none; letter-spacing: 0; font-weight: 400; }
.follow { display: block; margin: 0 12px 8px; color: var(--muted); font-size: 12px; }
#run-list { list-style: none; margin: 0; padding: 0 6px 6px; }
#run-list li { padding: 6px 8px; border-radius: 6px; cursor: pointer; display: grid; grid-template-columns: auto 1fr; gap: 2px 8px; align-items: center; }
#run-list li:hover { background: #f1f5f9; }
#run-list li.selected { background: #dbeafe; }
#run-list li.empty { color: var(--muted); cursor: default; display: block; }
#run-list .run-id { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
#run-list .run-meta { grid-column: 1 / -1; color: var(--muted); font-size: 11px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.badge { display: inline-block; font-size: 11px; font-weight: 600; padding: 1px 7px; border-radius: 999px; background: #e2e8f0; color: #334155; }
.badge[data-status="running"] { background: #dbeafe; color: #1e40af; }
.badge[data-status="awaiting"] { background: #fef3c7; color: #92400e; }
.badge[data-status="completed"] { background: #dcfce7; color: #166534; }
.badge[data-status="failed"], .badge[data-status="error"] { background: #fee2e2; color: #991b1b; }
.badge[data-status="canceled"] { background: #f1f5f9; color: #475569; }
.source { font-size: 10px; color: #7c3aed; }
#chart-panel { display: flex; flex-direction: column; }
.toolbar { display: flex; align-items: center; gap: 10px; padding: 8px 12px; border-bottom: 1px solid var(--line); position: sticky; top: 0; background: #fff; z-index: 1; }
#run-title { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-weight: 600; }
.state-name { font-family: ui-monospace, "DejaVu Sans Mono", monospace; color: var(--accent); }
.transition { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 11px; color: #9a3412; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; max-width: 45%; }
.spacer { flex: 1; }
button { font: inherit; font-size: 12px; border: 1px solid var(--line); background: #f8fafc; border-radius: 6px; padding: 2px 8px; cursor: pointer; }
#chart { padding: 8px; overflow: auto; flex: 1; }
#chart.fit { overflow: hidden; }
#chart.fit svg { display: block; width: 100%; height: 100%; }
#event-log { list-style: none; margin: 0; padding: 0 8px; font-size: 12px; }
#event-log li { border-bottom: 1px solid #f1f5f9; padding: 4px 4px; }
#event-log li .head { display: flex; gap: 8px; align-items: baseline; cursor: pointer; }
#event-log time { color: var(--muted); font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 11px; min-width: 58px; text-align: right; }
#event-log .type { font-weight: 600; font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
#event-log li[data-kind="xstate_event"] .type { color: #7c3aed; }
#event-log li[data-kind="state"] .type, #event-log li[data-type="state_changed"] .type { color: var(--accent); }
#event-log li[data-type^="await_"] .type { color: #b45309; }
#event-log li[data-type="run_failed"] .type { color: #b91c1c; }
#event-log li[data-type="run_completed"] .type { color: #15803d; }
#event-log .summary { color: #334155; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; flex: 1; }
#event-log pre { display: none; margin: 4px 0 2px 66px; white-space: pre-wrap; word-break: break-word; background: #f8fafc; padding: 6px; border-radius: 4px; font-size: 11px; }
#event-log li.open pre { display: block; }
#context { margin: 0 12px 12px; white-space: pre-wrap; word-break: break-word; font-size: 11px; background: #f8fafc; padding: 8px; border-radius: 6px; max-height: 40vh; overflow: auto; }
`;

/** Plain browser JS (no build step); it only ever talks to the page's own origin. */
const PAGE_SCRIPT = `
(() => {
  'use strict';
  const token = new URLSearchParams(location.search).get('token') || '';
  const machineId = document.body.dataset.machineId;
  const runs = new Map();
  const logs = new Map();
  let selected = null;
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const states = Array.from(document.querySelectorAll('#chart [data-state-id]'));
  const edges = Array.from(document.querySelectorAll('#chart [data-edge-id]'));

  const leaf = (run) => {
    const active = run.activeStates || [];
    return active
      .filter((id) => !active.some((other) => other.startsWith(id + '.')))
      .map((id) => id.startsWith(run.machineId + '.') ? id.slice(run.machineId.length + 1) : id)
      .join(', ');
  };
  /** An edge as its label reads on the chart: \`done(plan) [planAwaitsClarification]\`. */
  const edgeText = (id) => {
    const edge = edges.find((node) => node.dataset.edgeId === id);
    if (!edge) return id;
    return Array.from(edge.querySelectorAll('.edge-label')).map((line) => line.textContent).join(' ');
  };
  const newest = () => Array.from(runs.values()).sort((a, b) => b.startedAt - a.startedAt)[0];
  const follow = () => $('follow').checked;

  function renderRuns() {
    const list = $('run-list');
    list.replaceChildren();
    const all = Array.from(runs.values()).sort((a, b) => b.startedAt - a.startedAt);
    if (all.length === 0) list.append(el('li', 'empty', 'No runs yet.'));
    for (const run of all) {
      const item = el('li', run.key === selected ? 'selected' : '');
      item.dataset.key = run.key;
      item.dataset.status = run.status;
      const badge = el('span', 'badge', run.status);
      badge.dataset.status = run.status;
      item.append(badge, el('span', 'run-id', run.runId));
      const meta = el('span', 'run-meta', [run.agentId, leaf(run)].filter(Boolean).join(' · '));
      if (run.source !== 'native') meta.append(' ', el('span', 'source', 'via ' + run.source));
      item.append(meta);
      item.title = run.runId + ' (' + run.source + ')';
      item.addEventListener('click', () => {
        $('follow').checked = run.key === (newest() && newest().key);
        select(run.key);
      });
      list.append(item);
    }
  }

  function renderChart() {
    const run = selected ? runs.get(selected) : undefined;
    const active = new Set(run && run.machineId === machineId ? run.activeStates : []);
    const taken = new Set(run && run.lastTransition ? run.lastTransition.edgeIds : []);
    for (const node of states) node.classList.toggle('active', active.has(node.dataset.stateId));
    for (const node of edges) node.classList.toggle('taken', taken.has(node.dataset.edgeId));
    $('run-title').textContent = run ? run.runId : 'no run selected';
    const status = $('run-status');
    status.textContent = run ? run.status : '–';
    status.dataset.status = run ? run.status : 'none';
    $('run-state').textContent = run ? leaf(run) : '';
    const last = $('last-transition');
    last.textContent = run && run.lastTransition ? 'took ' + run.lastTransition.edgeIds.map(edgeText).join(' → ') : '';
    last.title = run && run.lastTransition ? run.lastTransition.edgeIds.join('\\n') : '';
    $('context').textContent = run ? JSON.stringify(run.context, null, 2) : '–';
  }

  function summary(entry) {
    const d = entry.data || {};
    switch (entry.type) {
      case 'state_changed': return (d.previous ? d.previous + ' → ' : '') + d.state;
      case 'run_started': return d.agentId || '';
      case 'await_clarification': return d.clarification ? d.clarification.question : '';
      case 'await_confirmation': return d.confirmation ? d.confirmation.prompt : '';
      case 'tool_call_scheduled': return d.tool + ' #' + d.attempt;
      case 'tool_result': return d.result ? d.result.name + (d.result.error ? ' ✗ ' + d.result.error.message : ' ✓') : '';
      case 'retry_hint': return d.hint ? d.hint.reason + ' ' + d.hint.tool : '';
      case 'policy_decision': return d.decision ? d.decision.policy + ': ' + (d.decision.kinds || []).join(', ') : '';
      case 'planner_note': return d.note || '';
      case 'run_completed': return d.finalResponse ? d.finalResponse.text : '';
      case 'run_failed': return d.error ? d.error.message : '';
      case 'run_canceled': return d.reason || '';
      default: {
        const text = JSON.stringify(d);
        return text && text.length > 140 ? text.slice(0, 140) + '…' : (text || '');
      }
    }
  }

  function logItem(entry, run) {
    const item = el('li');
    item.dataset.seq = String(entry.seq);
    item.dataset.type = entry.type;
    item.dataset.kind = entry.kind;
    const head = el('div', 'head');
    const offset = run ? (entry.at - run.startedAt) / 1000 : 0;
    head.append(el('time', '', '+' + offset.toFixed(3) + 's'), el('span', 'type', entry.type), el('span', 'summary', summary(entry)));
    head.addEventListener('click', () => item.classList.toggle('open'));
    item.append(head, el('pre', '', JSON.stringify(entry.data, null, 2)));
    return item;
  }

  function renderLog() {
    const list = $('event-log');
    list.replaceChildren();
    const run = selected ? runs.get(selected) : undefined;
    const entries = selected ? logs.get(selected) || [] : [];
    for (const entry of entries) list.append(logItem(entry, run));
    $('log-count').textContent = run ? '(' + entries.length + (run.dropped ? ', ' + run.dropped + ' dropped' : '') + ')' : '';
  }

  function select(key) {
    selected = key;
    renderRuns();
    renderChart();
    renderLog();
  }

  function maybeFollow(run) {
    if (!selected || (follow() && run.key !== selected && run.startedAt >= (runs.get(selected) || { startedAt: 0 }).startedAt)) {
      select(run.key);
      return true;
    }
    return false;
  }

  const source = new EventSource('/events?token=' + encodeURIComponent(token));
  const connection = $('connection');
  source.addEventListener('open', () => { connection.dataset.state = 'open'; connection.textContent = 'live'; });
  source.addEventListener('error', () => { connection.dataset.state = 'closed'; connection.textContent = 'reconnecting…'; });
  source.addEventListener('hello', (message) => {
    const data = JSON.parse(message.data);
    runs.clear();
    logs.clear();
    for (const run of data.runs) runs.set(run.key, run);
    for (const key of Object.keys(data.logs)) logs.set(key, data.logs[key]);
    const first = newest();
    if (selected && !runs.has(selected)) selected = null;
    select(selected || (first ? first.key : null));
  });
  source.addEventListener('run', (message) => {
    const run = JSON.parse(message.data).run;
    const isNew = !runs.has(run.key);
    runs.set(run.key, run);
    if (isNew && !logs.has(run.key)) logs.set(run.key, []);
    if (!maybeFollow(run)) {
      renderRuns();
      if (run.key === selected) renderChart();
    }
  });
  source.addEventListener('log', (message) => {
    const data = JSON.parse(message.data);
    const entries = logs.get(data.key) || [];
    entries.push(data.entry);
    logs.set(data.key, entries);
    if (data.key === selected) {
      $('event-log').append(logItem(data.entry, runs.get(data.key)));
      const run = runs.get(data.key);
      $('log-count').textContent = '(' + entries.length + (run && run.dropped ? ', ' + run.dropped + ' dropped' : '') + ')';
    }
  });
  source.addEventListener('removed', (message) => {
    const key = JSON.parse(message.data).key;
    runs.delete(key);
    logs.delete(key);
    if (selected === key) {
      const first = newest();
      select(first ? first.key : null);
    } else renderRuns();
  });
  $('zoom').addEventListener('click', () => {
    const chart = $('chart');
    chart.classList.toggle('fit');
    $('zoom').textContent = chart.classList.contains('fit') ? '1:1' : 'fit';
  });
  $('follow').addEventListener('change', () => { if (follow()) { const first = newest(); if (first) select(first.key); } });
})();
`;
