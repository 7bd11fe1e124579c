/**
 * The event log, its newest entries (earlier ones fetched a page at a time), and time travel:
 * selecting an entry shows the chart and context as they were then (`/api/runs/:key/frame`).
 */
import type { LogEntry, RunFrame, RunSummary } from '../inspection-store.ts';
import { apiUrl, getJson, runPath } from './api.ts';
import { $, el } from './dom.ts';
import { entryOffset, entrySummary } from './log-summary.ts';
import { renderChart } from './run-view.ts';
import { selectedLog, selectedRun, state } from './state.ts';
import { renderTimeline } from './timeline.ts';

/** Entries asked for per `show earlier entries`. */
const LOG_PAGE = 200;

/** A row of the event log; its payload is drawn when it is first opened (a run's log opens without them). */
export function logItem(entry: LogEntry, run: RunSummary | undefined): HTMLLIElement {
  const item = el('li');
  item.tabIndex = 0;
  item.dataset.seq = String(entry.seq);
  item.dataset.type = entry.type;
  item.dataset.kind = entry.kind;
  if (state.travel?.seq === entry.seq) item.classList.add('current');
  const head = el('div', 'head');
  head.append(
    el('span', 'seq', `#${entry.n}`),
    el('time', '', entryOffset(entry, run?.startedAt)),
    el('span', 'type', entry.type),
    el('span', 'summary', entrySummary(entry)),
  );
  const choose = () => {
    if (!item.querySelector('pre')) item.append(el('pre', '', JSON.stringify(entry.data, null, 2)));
    item.classList.toggle('open');
    timeTravel(entry);
  };
  head.addEventListener('click', choose);
  item.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') choose();
  });
  item.append(head);
  return item;
}

/** Draws the open run's log loaded here. */
export function renderLog(): void {
  const run = selectedRun();
  const entries = selectedLog();
  $('event-log').replaceChildren(...entries.map((entry) => logItem(entry, run)));
  $('log-earlier').hidden = state.logEarlier === 0;
  renderLogCount(run, entries);
}

/** The log's count: entries kept, how many are shown, how many `maxLog` dropped. */
export function renderLogCount(run: RunSummary | undefined, entries: LogEntry[]): void {
  const total = entries.length + state.logEarlier;
  const shown = state.logEarlier ? `, newest ${entries.length} shown` : '';
  const dropped = run?.dropped ? `, ${run.dropped} dropped` : '';
  $('log-count').textContent = run ? `(${total}${shown}${dropped})` : '';
}

/** Shows the run as of log entry `entry` (its newest: live again): chart, context and timeline. */
function timeTravel(entry: LogEntry): void {
  const { seq, n } = entry;
  const key = state.selected;
  if (!key) return;
  const entries = state.logs.get(key) ?? [];
  if (entries.length && entries[entries.length - 1]!.seq === seq) {
    backToLive();
    return;
  }
  void getJson<RunFrame>(apiUrl(runPath(key, 'frame'), { seq: String(seq) })).then((frame) => {
    if (state.selected !== key) return;
    if (!frame) {
      $('travel').hidden = false;
      $('travel-text').textContent = `no snapshot kept from event #${n}`;
      return;
    }
    state.travel = { seq, n, frame };
    renderChart();
    renderTimeline();
    for (const item of document.querySelectorAll<HTMLElement>('#event-log li')) {
      item.classList.toggle('current', item.dataset.seq === String(seq));
    }
  });
}

function backToLive(): void {
  state.travel = null;
  renderChart();
  renderTimeline();
  renderLog();
}

/** The open run's log comes a page at a time, newest first (issue 27 item 1): earlier pages on request. */
export function setUpEventLog(): void {
  const earlier = $<HTMLButtonElement>('log-earlier');
  earlier.addEventListener('click', () => {
    const key = state.selected;
    const entries = key ? state.logs.get(key) : undefined;
    if (!key || !entries?.length) return;
    earlier.disabled = true;
    const url = apiUrl(runPath(key, 'log'), { before: String(entries[0]!.seq), limit: String(LOG_PAGE) });
    getJson<{ log: LogEntry[]; earlier: number }>(url).then(
      (page) => {
        earlier.disabled = false;
        if (!page || state.selected !== key || state.logs.get(key) !== entries) return;
        entries.unshift(...page.log);
        state.logEarlier = page.earlier;
        renderTimeline();
        renderLog();
      },
      () => {
        earlier.disabled = false;
      },
    );
  });
  $('travel-live').addEventListener('click', backToLive);
}
