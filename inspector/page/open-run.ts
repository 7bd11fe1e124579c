/**
 * Opening a run: its context and log from the server; from then on the stream sends its new log
 * entries and contexts (held back until the log arrives, then merged by seq).
 */
import type { LogEntry, RunSummary } from '../inspection-store.ts';
import { apiUrl, getJson, runPath } from './api.ts';
import { renderLog } from './event-log.ts';
import { renderChart } from './run-view.ts';
import { type Opening, state } from './state.ts';
import { renderTimeline } from './timeline.ts';

/** Opens run `key` (null: none). Opening the run already open only marks its row. */
export function select(key: string | null): void {
  const changed = key !== state.selected;
  if (changed) {
    state.travel = null;
    state.logEarlier = 0;
    state.logs.clear();
    state.openContext = null;
  }
  state.selected = key;
  for (const row of document.querySelectorAll<HTMLElement>('#run-list li[data-key]')) {
    row.classList.toggle('selected', row.dataset.key === key);
  }
  if (!changed && key) return;
  renderChart();
  renderTimeline();
  renderLog();
  if (!key || !state.streamId) return;
  const pending: Opening = { key, buffered: [] };
  state.opening = pending;
  const url = apiUrl(runPath(key), { stream: state.streamId });
  void getJson<{ run: RunSummary; context: unknown; log: LogEntry[]; earlier?: number }>(url).then(
    (detail) => {
      if (state.opening !== pending) return;
      state.opening = null;
      if (!detail || state.selected !== key) return;
      const last = detail.log.length ? detail.log[detail.log.length - 1]!.seq : 0;
      state.logs.set(key, detail.log.concat(pending.buffered.filter((entry) => entry.seq > last)));
      state.logEarlier = detail.earlier ?? 0;
      state.openContext = pending.context !== undefined ? pending.context : detail.context;
      // The summary that came with the log, unless an update the stream brought meanwhile is newer.
      const known = state.runs.get(key);
      if (!known || detail.run.updatedAt >= known.updatedAt)
        state.runs.set(key, Object.assign(known ?? {}, detail.run));
      renderChart();
      renderTimeline();
      renderLog();
      document.body.dataset.opened = key;
    },
  );
}

/** Whether the `follow newest` box is ticked. */
export function following(): boolean {
  return (document.getElementById('follow') as HTMLInputElement).checked;
}

/** Opens `run` when nothing is open, or when following and it is newer than the run open. */
export function maybeFollow(run: RunSummary): boolean {
  const open = state.selected ? state.runs.get(state.selected) : undefined;
  if (
    !state.selected ||
    (following() && run.key !== state.selected && run.startedAt >= (open?.startedAt ?? 0))
  ) {
    select(run.key);
    return true;
  }
  return false;
}
