/**
 * The runs list: newest first, at most {@link MAX_RUN_ROWS} rows drawn, filtered on the server.
 * Rows are kept by run key and redrawn only when what they show changes, and runs that start
 * while the pointer (or focus) is in the list wait above it: a list redrawn every frame under a
 * stream of runs lost every click (the press and the release fell on different rows).
 */
import type { RunPage, RunSummary } from '../inspection-store.ts';
import { apiUrl, getJson } from './api.ts';
import { togglePick } from './compare-model.ts';
import { machineId } from './config.ts';
import { $, button, el } from './dom.ts';
import { openRun } from './navigate.ts';
import { runFacts } from './run-facts.ts';
import {
  countText,
  emptyText,
  holdMark,
  isFiltered,
  listView,
  matchingRuns,
  newerTitle,
  type RunFilter,
  runMatches,
} from './run-filter.ts';
import { newestRun, state } from './state.ts';
import { leafStates } from './states.ts';

/** Rows drawn at most; past them the list says how many more match. */
const MAX_RUN_ROWS = 200;

const rows = new Map<string, { item: HTMLLIElement; shows: string }>();
/** While held: the newest startedAt shown when the hold began. */
let holdAfter: number | null = null;

/** The filter as typed in the list's boxes. */
export function currentFilter(): RunFilter {
  return {
    status: $<HTMLSelectElement>('status-filter').value,
    text: $<HTMLInputElement>('run-filter').value,
  };
}

/** Whether `run` passes the filter typed. */
export function matchesFilter(run: RunSummary): boolean {
  return runMatches(run, currentFilter());
}

function runRow(run: RunSummary): HTMLLIElement {
  const why = run.outcome ? run.outcome.errorName || run.outcome.message : '';
  const metaText = [run.agentId, leafStates(run.activeStates ?? [], machineId()), why]
    .filter(Boolean)
    .join(' · ');
  const facts = runFacts(run, Date.now());
  const picked = state.picked.includes(run.key);
  const shows = [run.status, run.runId, run.source, metaText, facts, run.key === state.selected, picked].join(
    '\n',
  );
  let row = rows.get(run.key);
  if (row && row.shows === shows) return row.item;
  if (!row) {
    const item = el('li');
    item.tabIndex = 0;
    item.dataset.key = run.key;
    const choose = () => openRun(run.key, run.key === newestRun()?.key);
    item.addEventListener('click', choose);
    item.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' || event.key === ' ') {
        event.preventDefault();
        choose();
      }
    });
    row = { item, shows: '' };
    rows.set(run.key, row);
  }
  const item = row.item;
  row.shows = shows;
  item.className = run.key === state.selected ? 'selected' : '';
  item.dataset.status = run.status;
  const badge = el('span', 'badge', run.status);
  badge.dataset.status = run.status;
  const id = el('span', 'run-id', run.runId);
  id.title = run.runId;
  const meta = el('span', 'run-meta', metaText);
  if (run.source !== 'native') meta.append(' ', el('span', 'source', `via ${run.source}`));
  const session = run.sessionId ? ` · session ${run.sessionId}` : '';
  const factsLine = el('span', 'run-facts', `${facts}${session}`);
  factsLine.title = factsLine.textContent ?? '';
  item.replaceChildren(pickBox(run, picked), badge, id, meta, factsLine);
  item.title = `${run.runId} (${run.source})`;
  return item;
}

/** The row's box picking it for a comparison (two picked: `compare picked` above the list). */
function pickBox(run: RunSummary, picked: boolean): HTMLInputElement {
  const box = el('input', 'pick');
  box.type = 'checkbox';
  box.checked = picked;
  box.title = 'pick to compare';
  box.setAttribute('aria-label', `pick ${run.runId} to compare`);
  // Picking is not opening: the row's own click opens the run.
  box.addEventListener('click', (event) => event.stopPropagation());
  box.addEventListener('keydown', (event) => event.stopPropagation());
  box.addEventListener('change', () => {
    state.picked = togglePick(state.picked, run.key);
    renderRuns();
  });
  return box;
}

/** Draws the list: moves only the rows out of place, forgets those no longer drawn. */
export function renderRuns(): void {
  const list = $('run-list');
  const filter = currentFilter();
  const { shown, held } = listView(matchingRuns(state.runs.values(), filter), holdAfter, state.selected);
  $('run-count').textContent = countText(state.listing, isFiltered(filter));
  // Above the list, not in it: the rows under the pointer do not move.
  const compare = $('compare-picked');
  compare.hidden = state.picked.length !== 2;
  const newer = $('show-newer');
  newer.hidden = held === 0;
  newer.textContent = `+${held}`;
  newer.title = newerTitle(held);
  newer.setAttribute('aria-label', newer.title);
  const items: HTMLLIElement[] = [];
  if (shown.length === 0) items.push(el('li', 'empty', emptyText(state.listing)));
  const drawn = shown.slice(0, MAX_RUN_ROWS);
  for (const run of drawn) items.push(runRow(run));
  if (shown.length > MAX_RUN_ROWS) {
    items.push(el('li', 'more', `${shown.length - MAX_RUN_ROWS} more: narrow the filter`));
  } else if (state.listing.next) {
    const more = el('li', 'more');
    const next = state.listing.next;
    const load = button('', 'load older runs', 'load-more');
    load.addEventListener('click', () => void loadPage(next));
    more.append(load);
    items.push(more);
  }
  const kept = new Set(drawn.map((run) => run.key));
  for (const key of Array.from(rows.keys())) if (!kept.has(key)) rows.delete(key);
  const wanted = new Set<Element>(items);
  for (const child of Array.from(list.children)) if (!wanted.has(child)) child.remove();
  items.forEach((item, i) => {
    if (list.children[i] !== item) list.insertBefore(item, list.children[i] ?? null);
  });
}

let pendingRuns = false;
/** Draws the list at the next frame (once, however many messages came). */
export function renderRunsSoon(): void {
  if (pendingRuns) return;
  pendingRuns = true;
  requestAnimationFrame(() => {
    pendingRuns = false;
    renderRuns();
  });
}

/** Replaces (or, after `before`, extends) the runs loaded with a page of summaries. */
export function takePage(page: RunPage, replace: boolean): void {
  if (replace)
    for (const key of Array.from(state.runs.keys())) if (key !== state.selected) state.runs.delete(key);
  for (const run of page.runs) state.runs.set(run.key, run);
  state.listing = { total: page.total, matched: page.matched, next: page.next };
  // A new list (another filter, a reconnect) is not runs arriving under the pointer: a hold
  // begins again from it. Else the run a search finds, started during the hold, was held back
  // as "new" behind "No run matches." (issue 38).
  if (replace && holdAfter !== null) holdAfter = holdMark(state.runs.values(), currentFilter());
}

let pageRequest = 0;
/** A page of summaries from the server, for the filter shown (or the page after `before`). */
export async function loadPage(before: string | null): Promise<void> {
  const ask = ++pageRequest;
  const filter = currentFilter();
  const params: Record<string, string> = { limit: '100' };
  if (before) params.before = before;
  if (filter.status) params.status = filter.status;
  if (filter.text.trim()) params.q = filter.text.trim();
  const page = await getJson<RunPage>(apiUrl('/api/runs', params));
  if (ask !== pageRequest || !page) return;
  takePage(page, !before);
  renderRuns();
}

/** The hold (above), the `+N` button, and the filter's boxes. */
export function setUpRunList(): void {
  const runList = $('run-list');
  const keyboardIn = () => runList.querySelector(':focus-visible') !== null;
  const hold = () => {
    if (holdAfter !== null) return;
    holdAfter = holdMark(state.runs.values(), currentFilter());
  };
  const release = () => {
    if (holdAfter === null || runList.matches(':hover') || keyboardIn()) return;
    holdAfter = null;
    renderRuns();
  };
  $('show-newer').addEventListener('click', () => {
    holdAfter = null;
    hold();
    renderRuns();
  });
  runList.addEventListener('pointerenter', hold);
  runList.addEventListener('focusin', () => {
    if (keyboardIn()) hold();
  });
  runList.addEventListener('pointerleave', () => setTimeout(release, 0));
  runList.addEventListener('focusout', () => setTimeout(release, 0));
  let filterTimer: ReturnType<typeof setTimeout> | undefined;
  $('run-filter').addEventListener('input', () => {
    clearTimeout(filterTimer);
    filterTimer = setTimeout(() => void loadPage(null), 150);
  });
  $('status-filter').addEventListener('change', () => void loadPage(null));
}
