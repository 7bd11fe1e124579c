/** The timeline: the open run's tool calls by turn (duration, outcome, hint), each openable, with a fork button. */
import type { RunSummary } from '../inspection-store.ts';
import { pageConfig } from './config.ts';
import { $, el } from './dom.ts';
import { turnNumber } from './event-data.ts';
import { forkButton, forkForm } from './fork.ts';
import { contextOf } from './run-context.ts';
import { selectedLog, selectedRun, state } from './state.ts';
import {
  callOutcome,
  type TimelineCall,
  timelineCountText,
  timelineItems,
  travelledLog,
} from './timeline-model.ts';

/** The run's trace in Jaeger: its own when its context carries one, else a search by its run id. */
function traceLink(run: RunSummary): string | null {
  const { jaegerUrl } = pageConfig();
  const traceparent = contextOf(state.openContext).traceContext?.traceparent;
  const parent = typeof traceparent === 'string' ? traceparent.split('-')[1] : null;
  if (!jaegerUrl) return null;
  const base = jaegerUrl.replace(/\/$/, '');
  return parent
    ? `${base}/trace/${parent}`
    : `${base}/search?tags=${encodeURIComponent(JSON.stringify({ 'toolwarden.run.id': run.runId }))}`;
}

/** Opens a call's row: its result, hint and ToolCallMeta, and its trace. */
function openCall(list: HTMLElement, row: HTMLElement, run: RunSummary, call: TimelineCall): void {
  for (const other of list.querySelectorAll('li.call.open')) other.classList.remove('open');
  row.classList.add('open');
  const detail = $('timeline-detail');
  detail.replaceChildren();
  const link = traceLink(run);
  if (link) {
    const a = el('a', '', 'trace in Jaeger');
    a.href = link;
    a.target = '_blank';
    a.rel = 'noreferrer';
    detail.append(a, '\n');
  }
  detail.append(JSON.stringify({ toolCallId: call.id, attempt: call.attempt, result: call.result }, null, 2));
  detail.hidden = false;
}

/** Draws the open run's timeline from its log loaded here. */
export function renderTimeline(): void {
  const list = $('timeline');
  list.replaceChildren();
  $('timeline-detail').hidden = true;
  const run = selectedRun();
  const entries = travelledLog(selectedLog(), state.travel?.seq ?? null);
  const { canFork } = pageConfig();
  let turn: string | null = null;
  let count = 0;
  for (const item of timelineItems(entries)) {
    if (item.kind === 'note') {
      const note = el('li', 'note', item.note);
      const { clarification, seq } = item;
      if (run && clarification && canFork && seq !== undefined) {
        note.append(
          ' ',
          forkButton(() => forkForm(run, seq, null, clarification)),
        );
      }
      list.append(note);
      continue;
    }
    if (item.turn !== turn) {
      turn = item.turn;
      list.append(el('li', 'turn', `turn ${turnNumber(turn)}`));
    }
    count++;
    const row = el('li', 'call');
    row.tabIndex = 0;
    row.dataset.toolCallId = item.id;
    const outcome = callOutcome(item.result);
    const badge = el('span', 'badge', outcome.text);
    badge.dataset.status = outcome.status;
    row.append(
      el('span', 'tool', item.tool),
      el('span', 'ms', item.end ? `${item.end - item.start} ms` : '…'),
      badge,
    );
    const { seq } = item;
    if (run && canFork && seq !== undefined) row.append(forkButton(() => forkForm(run, seq, item, null)));
    if (run) {
      row.addEventListener('click', () => openCall(list, row, run, item));
      row.addEventListener('keydown', (event) => {
        if (event.key === 'Enter') openCall(list, row, run, item);
      });
    }
    list.append(row);
  }
  $('timeline-count').textContent = timelineCountText(count, entries.length, state.logEarlier);
}
