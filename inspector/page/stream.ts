/**
 * The live stream (`/events`, Server-Sent Events): `hello` (a page of run summaries), `run`,
 * `update`, `removed`, and the open run's `log` and `context`; `dropped` when the server ends the
 * stream, shown with its reason before the page reconnects.
 */
import type { InspectorMessage, LogEntry, RunPage, RunSummary } from '../inspection-store.ts';
import { apiUrl } from './api.ts';
import { $ } from './dom.ts';
import { logItem, renderLogCount } from './event-log.ts';
import { renderAwait } from './forms.ts';
import { maybeFollow, select } from './open-run.ts';
import { isFiltered } from './run-filter.ts';
import { currentFilter, loadPage, matchesFilter, renderRuns, renderRunsSoon, takePage } from './run-list.ts';
import { renderChart } from './run-view.ts';
import { newestRun, state } from './state.ts';
import { renderTimeline } from './timeline.ts';

/** Reconnecting after the server dropped the stream waits this long, ms. */
const RECONNECT_MS = 5000;

type Message<T extends InspectorMessage['type']> = Extract<InspectorMessage, { type: T }>;
const clientId = Math.random().toString(36).slice(2, 12);
let source: EventSource | null = null;
let retry: ReturnType<typeof setTimeout> | null = null;

function showDropped(reason: string): void {
  $('dropped').hidden = false;
  $('dropped-reason').textContent = reason;
}

function on<T>(name: string, handle: (data: T) => void): void {
  source?.addEventListener(name, (message) =>
    handle(JSON.parse((message as MessageEvent<string>).data) as T),
  );
}

function onHello(data: RunPage & { stream: string; droppedBefore?: string }): void {
  state.streamId = data.stream;
  if (data.droppedBefore) showDropped(`reconnected after: ${data.droppedBefore}`);
  else $('dropped').hidden = true;
  if (isFiltered(currentFilter())) void loadPage(null);
  else {
    state.runs.clear();
    takePage(data, true);
  }
  renderRuns();
  const first = newestRun();
  const keep = state.selected;
  state.selected = null;
  select(keep ?? (first ? first.key : null));
}

function onRun({ run }: Message<'run'>): void {
  if (state.runs.has(run.key)) {
    state.runs.set(run.key, run);
    renderRunsSoon();
    return;
  }
  state.listing.total++;
  if (!matchesFilter(run)) {
    renderRunsSoon();
    return;
  }
  state.listing.matched++;
  state.runs.set(run.key, run);
  maybeFollow(run);
  renderRunsSoon();
}

function onUpdate(data: Message<'update'>): void {
  const run = state.runs.get(data.key);
  if (!run) return; // not on a page loaded here
  Object.assign(run, data.changes as Partial<RunSummary>);
  renderRunsSoon();
  if (data.key === state.selected && !state.travel) renderChart();
}

function onContext(data: Message<'context'>): void {
  if (data.key !== state.selected) return;
  if (state.opening?.key === data.key) {
    state.opening.context = data.context;
    return;
  }
  state.openContext = data.context;
  if (!state.travel) renderChart();
}

function onLog(data: { key: string; entry: LogEntry }): void {
  if (data.key !== state.selected) return;
  if (state.opening?.key === data.key) {
    state.opening.buffered.push(data.entry);
    return;
  }
  const entries = state.logs.get(data.key) ?? [];
  entries.push(data.entry);
  state.logs.set(data.key, entries);
  const run = state.runs.get(data.key);
  $('event-log').append(logItem(data.entry, run));
  renderLogCount(run, entries);
  const type = data.entry.type;
  if (type.startsWith('await_') || type.startsWith('tool_') || type === 'policy_decision') renderTimeline();
  if (type.startsWith('await_')) renderAwait();
}

function onRemoved({ key }: Message<'removed'>): void {
  state.listing.total = Math.max(0, state.listing.total - 1);
  if (state.runs.delete(key)) state.listing.matched = Math.max(0, state.listing.matched - 1);
  if (state.selected === key) select(newestRun()?.key ?? null);
  renderRunsSoon();
}

/** Opens the stream (closing one open); the list stays as it was while the browser reconnects. */
export function connect(): void {
  if (retry) {
    clearTimeout(retry);
    retry = null;
  }
  source?.close();
  const connection = $('connection');
  source = new EventSource(apiUrl('/events', { client: clientId }));
  source.addEventListener('open', () => {
    connection.dataset.state = 'open';
    connection.textContent = 'live';
  });
  source.addEventListener('error', () => {
    if (connection.dataset.state === 'dropped') return;
    connection.dataset.state = 'closed';
    connection.textContent = 'reconnecting…';
  });
  on<{ reason: string }>('dropped', ({ reason }) => {
    // The server ended this stream and says why: say so, keep what is shown, reconnect later.
    source?.close();
    connection.dataset.state = 'dropped';
    connection.textContent = 'disconnected';
    showDropped(`${reason} — reconnecting in ${RECONNECT_MS / 1000} s`);
    retry = setTimeout(connect, RECONNECT_MS);
  });
  on('hello', onHello);
  on('run', onRun);
  on('update', onUpdate);
  on('context', onContext);
  on('log', onLog);
  on('removed', onRemoved);
}
