/** The inspector page's stylesheet (inspector-page.ts): light and dark, no web fonts. */
export const PAGE_STYLE: string = `
:root { color-scheme: light dark; --bg: #f1f5f9; --panel: #fff; --line: #e2e8f0; --muted: #64748b; --ink: #0f172a; --accent: #2563eb; --soft: #f8fafc; --hover: #f1f5f9; --sel: #dbeafe; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0b1220; --panel: #111a2e; --line: #1e293b; --muted: #94a3b8; --ink: #e2e8f0; --accent: #60a5fa; --soft: #0f172a; --hover: #1e293b; --sel: #1e3a8a; }
  .tw-chart .state-box { fill: #111a2e; stroke: #64748b; }
  .tw-chart .state.compound > .state-box { fill: #0f172a; stroke: #475569; }
  .tw-chart .state-title { fill: #e2e8f0; }
  .tw-chart .state.root.active > .state-title { fill: #e2e8f0; }
  .tw-chart .state.root.active > .state-box { fill: #0f172a; stroke: #475569; }
  .tw-chart .state.active > .state-box { fill: #1e3a8a; stroke: #60a5fa; }
  .tw-chart .state.active > .state-title { fill: #bfdbfe; }
  .tw-chart .edge-label-bg { fill: #111a2e; }
  .tw-chart .edge-label { fill: #cbd5e1; }
}
* { box-sizing: border-box; }
html, body { margin: 0; height: 100%; }
body { font: 13px/1.4 ui-sans-serif, system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--ink); background: var(--bg); display: flex; flex-direction: column; }
code, pre, .mono { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
header { display: flex; align-items: center; gap: 16px; padding: 6px 14px; background: #0f172a; color: #e2e8f0; }
header h1 { font-size: 15px; margin: 0; font-weight: 700; }
header h1 span { font-weight: 400; color: #94a3b8; }
header .machine code { color: #bfdbfe; }
.connection { margin-left: auto; font-size: 12px; padding: 2px 8px; border-radius: 999px; background: #334155; }
.connection[data-state="open"] { background: #166534; color: #dcfce7; }
.connection[data-state="closed"] { background: #991b1b; color: #fee2e2; }
main { flex: 1; display: grid; grid-template-columns: 200px minmax(0, 1fr) 280px; /* 280: the full chart fits 1600 px at 11 px text */ gap: 8px; padding: 8px; min-height: 0; }
main > * { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; min-height: 0; overflow: auto; }
h2 { font-size: 12px; text-transform: uppercase; letter-spacing: .06em; color: var(--muted); margin: 12px 12px 6px; }
.count { text-transform: none; letter-spacing: 0; font-weight: 400; color: var(--muted); font-size: 11px; }
.filters { display: flex; gap: 4px; margin: 0 8px 6px; }
.filters input { flex: 1; min-width: 0; }
input, select, textarea, button { font: inherit; font-size: 12px; color: var(--ink); background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: 3px 6px; }
button { cursor: pointer; }
button:focus-visible, input:focus-visible, li:focus-visible, #viewport:focus-visible, textarea:focus-visible { outline: 2px solid var(--accent); outline-offset: 1px; }
button[aria-pressed="true"] { background: var(--sel); border-color: var(--accent); }
.follow-row { display: flex; align-items: center; justify-content: space-between; gap: 6px; margin: 0 12px 8px; }
.follow { color: var(--muted); font-size: 12px; white-space: nowrap; }
.newer { font-size: 11px; padding: 0 6px; white-space: nowrap; }
.newer[hidden] { display: inline-block; visibility: hidden; } /* keeps its room: the list below must not move */
#run-list { list-style: none; margin: 0; padding: 0 6px 6px; }
#run-list li { padding: 6px 8px; border-radius: 6px; cursor: pointer; display: grid; grid-template-columns: auto auto 1fr; gap: 2px 8px; align-items: center; }
#run-list li:hover { background: var(--hover); }
#run-list li.selected { background: var(--sel); }
#run-list .run-facts { grid-column: 1 / -1; color: var(--muted); font-size: 11px; font-variant-numeric: tabular-nums; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
#timeline li.turn.model-turn { cursor: pointer; text-transform: none; letter-spacing: 0; }
#timeline li.model-turn.open, #timeline li.model-turn:hover { color: var(--ink); }
#timeline li.model-turn[data-status="failed"] { color: #b91c1c; }
#run-list li.empty, #run-list li.more { color: var(--muted); cursor: default; display: block; }
#run-list .run-id { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
#run-list .run-meta { grid-column: 1 / -1; color: var(--muted); font-size: 11px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.badge { display: inline-block; font-size: 11px; font-weight: 600; padding: 1px 7px; border-radius: 999px; background: #e2e8f0; color: #334155; }
.badge[data-status="running"] { background: #dbeafe; color: #1e40af; }
.badge[data-status="awaiting"] { background: #fef3c7; color: #92400e; }
.badge[data-status="completed"], .badge[data-status="ok"] { background: #dcfce7; color: #166534; }
.badge[data-status="failed"], .badge[data-status="error"] { background: #fee2e2; color: #991b1b; }
.badge[data-status="hint"] { background: #ffedd5; color: #9a3412; }
.badge[data-status="canceled"] { background: #f1f5f9; color: #475569; }
.source { font-size: 10px; color: #7c3aed; }
#chart-panel { display: flex; flex-direction: column; overflow: hidden; }
.toolbar { display: flex; align-items: center; gap: 8px; padding: 6px 10px; border-bottom: 1px solid var(--line); }
.toolbar.secondary { padding: 4px 10px; }
.segmented { display: inline-flex; }
.segmented button { border-radius: 0; }
.segmented button:first-child { border-radius: 6px 0 0 6px; }
.segmented button:last-child { border-radius: 0 6px 6px 0; }
#run-title { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-weight: 600; word-break: break-all; min-width: 0; user-select: all; }
.copy { font-size: 11px; padding: 1px 6px; white-space: nowrap; }
.state-name { font-family: ui-monospace, "DejaVu Sans Mono", monospace; color: var(--accent); }
.transition { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 11px; color: #c2410c; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; max-width: 50%; }
.spacer { flex: 1; }
.travel { font-size: 12px; color: #7c3aed; }
#viewport { flex: 1; position: relative; overflow: hidden; cursor: grab; touch-action: none; }
#viewport.dragging { cursor: grabbing; }
#canvas { position: absolute; left: 0; top: 0; transform-origin: 0 0; }
#canvas svg { display: block; }
#timeline, #event-log { list-style: none; margin: 0; padding: 0 8px; font-size: 12px; }
#timeline li.turn { color: var(--muted); font-size: 11px; padding: 6px 4px 2px; text-transform: uppercase; letter-spacing: .05em; }
#timeline li.call { display: grid; grid-template-columns: 1fr auto auto; gap: 6px; align-items: center; padding: 3px 4px; border-radius: 4px; cursor: pointer; }
#timeline li.call:hover, #timeline li.call.open { background: var(--hover); }
#timeline .tool { font-family: ui-monospace, "DejaVu Sans Mono", monospace; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
#timeline .ms { color: var(--muted); font-size: 11px; }
#timeline li.note { color: var(--muted); font-size: 11px; padding: 2px 4px 2px 12px; }
#timeline-detail, #context { margin: 4px 12px 8px; white-space: pre-wrap; word-break: break-word; font-size: 11px; background: var(--soft); padding: 8px; border-radius: 6px; max-height: 40vh; overflow: auto; }
#timeline-detail a { color: var(--accent); }
#event-log li { border-bottom: 1px solid var(--line); padding: 3px 4px; }
#event-log li.current { background: #ede9fe; }
@media (prefers-color-scheme: dark) { #event-log li.current { background: #2e1065; } }
#event-log li .head { display: flex; gap: 8px; align-items: baseline; cursor: pointer; }
#event-log .seq { color: var(--muted); font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 11px; min-width: 34px; text-align: right; }
#event-log time { color: var(--muted); font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 11px; min-width: 58px; text-align: right; }
#event-log .type { font-weight: 600; font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
#event-log li[data-kind="xstate_event"] .type { color: #7c3aed; }
#event-log li[data-kind="state"] .type, #event-log li[data-type="state_changed"] .type { color: var(--accent); }
#event-log li[data-type^="await_"] .type { color: #b45309; }
#event-log li[data-type="run_failed"] .type { color: #b91c1c; }
#event-log li[data-type="run_completed"] .type { color: #15803d; }
#event-log .summary { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; flex: 1; }
#event-log pre { display: none; margin: 4px 0 2px 66px; white-space: pre-wrap; word-break: break-word; background: var(--soft); padding: 6px; border-radius: 4px; font-size: 11px; }
#event-log li.open pre { display: block; }
#await-panel { border-bottom: 1px solid var(--line); padding-bottom: 8px; }
#await-body { margin: 0 12px; }
#await-body .question { font-weight: 600; margin: 0 0 6px; }
#await-body pre { white-space: pre-wrap; word-break: break-word; background: var(--soft); padding: 6px; border-radius: 4px; font-size: 11px; margin: 4px 0; }
#await-body textarea { width: 100%; min-height: 60px; font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
.edit-call label { display: block; margin: 6px 0; }
.in-doubt-call { border-top: 1px solid var(--line); padding-top: 6px; margin-top: 6px; }
.in-doubt-call label.note, .in-doubt-call .in-doubt-choices { display: block; margin: 4px 0; }
.in-doubt-choice { margin-right: 12px; }
.in-doubt-call input.in-doubt-error { width: 100%; }
#await-body .actions { display: flex; gap: 6px; margin-top: 6px; align-items: center; }
#await-body .note { color: var(--muted); font-size: 12px; }
.outcome { padding: 6px 10px; border-bottom: 1px solid var(--line); background: #fef2f2; color: #7f1d1d; font-size: 12px; }
.outcome[data-kind="canceled"] { background: var(--soft); color: var(--ink); }
.outcome[data-kind="capped"], .outcome[data-kind="finalized"] { background: #fffbeb; color: #78350f; }
@media (prefers-color-scheme: dark) { .outcome { background: #450a0a; color: #fecaca; } .outcome[data-kind="capped"], .outcome[data-kind="finalized"] { background: #451a03; color: #fde68a; } }
.outcome-head { display: flex; gap: 8px; align-items: baseline; flex-wrap: wrap; }
#outcome-error { font-weight: 700; }
#outcome-step { color: var(--muted); }
#outcome-message { margin-top: 2px; white-space: pre-wrap; word-break: break-word; }
#outcome-causes { margin: 2px 0 0; padding-left: 18px; font-size: 11px; }
.lineage { padding: 4px 10px; border-bottom: 1px solid var(--line); font-size: 12px; color: var(--muted); }
.run-link { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 11px; color: var(--accent); background: none; border: none; padding: 0 2px; text-decoration: underline; }
button.fork { font-size: 10px; padding: 0 5px; margin-left: 4px; }
#timeline li.call { grid-template-columns: 1fr auto auto auto; }
.fork-form textarea { width: 100%; min-height: 80px; font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
.dropped { margin: 0 8px 8px; padding: 6px 8px; border-radius: 6px; background: #fee2e2; color: #991b1b; font-size: 12px; }
.connection[data-state="dropped"] { background: #991b1b; color: #fee2e2; }
#compare-panel { position: fixed; inset: 44px 12px 12px 12px; z-index: 20; display: flex; flex-direction: column; overflow: hidden; background: var(--bg); border: 1px solid var(--line); border-radius: 8px; box-shadow: 0 8px 30px rgba(0,0,0,.25); padding: 0 12px 12px; }
#compare-panel[hidden] { display: none; }
#compare-scroll { flex: 1; overflow: auto; min-height: 0; }
#compare-table thead th { position: sticky; top: 0; background: var(--bg); }
#compare-verdict { font-weight: 600; margin: 8px 0 4px; }
#compare-totals { margin: 0 0 4px; padding-left: 18px; font-size: 12px; }
#compare-table { width: 100%; border-collapse: collapse; font-size: 12px; table-layout: fixed; }
#compare-table th, #compare-table td { border-top: 1px solid var(--line); padding: 4px 6px; vertical-align: top; text-align: left; }
#compare-table thead th:nth-child(1) { width: 64px; } #compare-table thead th:nth-child(2) { width: 150px; }
#compare-table .line { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 11px; word-break: break-word; }
#compare-table .line[data-changed="true"] { background: #fef3c7; color: #78350f; }
#compare-table tr[data-label="changed"] .badge { background: #fde68a; color: #78350f; }
#compare-table tr[data-label="same"] .badge { background: var(--soft); }
#compare-table tr.first-difference { outline: 2px solid #d97706; outline-offset: -2px; }
#compare-table .first-note { color: #b45309; font-weight: 700; }
#compare-table .fields { color: var(--muted); }
#compare-table td.absent { color: var(--muted); font-style: italic; }
@media (prefers-color-scheme: dark) { #compare-table .line[data-changed="true"] { background: #451a03; color: #fde68a; } }
#run-list input.pick { margin: 0 4px 0 0; }
.error { color: #b91c1c; margin: 6px 12px; white-space: pre-wrap; }
.sent { color: #15803d; }
`;
