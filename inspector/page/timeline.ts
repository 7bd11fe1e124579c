/**
 * The timeline: the open run's planner turns (what the model was sent and answered, tokens,
 * latency) and tool calls by turn (duration, outcome, hint), each openable, with a fork button.
 */
import type { Message } from '../../run/message.ts';
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
  type TimelineTurn,
  timelineCountText,
  timelineItems,
  travelledLog,
} from './timeline-model.ts';
import { answerLines, messageLines, newMessages, turnHeader } from './turn-model.ts';

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

/** A planner turn's row: its header; opened, what the model was sent (new since the turn before) and answered. */
function turnRow(list: HTMLElement, item: TimelineTurn): HTMLLIElement {
  const row = el('li', 'turn model-turn', turnHeader(item.turn));
  row.tabIndex = 0;
  row.dataset.turnId = item.turn.turnId;
  if (item.turn.error) row.dataset.status = 'failed';
  const open = () => {
    for (const other of list.querySelectorAll('li.open')) other.classList.remove('open');
    row.classList.add('open');
    const transcript = contextOf(state.openContext).messages as Message[] | undefined;
    const sent = newMessages(transcript ?? [], item.from, item.turn);
    const detail = $('timeline-detail');
    detail.replaceChildren(
      el('strong', '', `sent ${item.turn.messages} message${item.turn.messages === 1 ? '' : 's'}`),
      item.from ? ` (${sent.length} new)` : '',
      '\n',
      messageLines(sent).join('\n'),
      '\n',
      el('strong', '', item.turn.error ? 'failed' : 'answered'),
      '\n',
      answerLines(item.turn).join('\n'),
    );
    detail.hidden = false;
  };
  row.addEventListener('click', open);
  row.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') open();
  });
  return row;
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
    if (item.kind === 'turn') {
      turn = item.turn.turnId;
      list.append(turnRow(list, item));
      continue;
    }
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
