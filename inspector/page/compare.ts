/**
 * The compare panel (issue 38 item 3): two runs side by side, step by step, from the fork's
 * `compare with parent` link or the two runs picked in the list (`compare picked`). The server
 * compares (`GET /api/compare`); compare-model.ts words it; this draws it and scrolls to the
 * first difference.
 */
import type { ComparedRuns } from '../server/compare-route.ts';
import { apiUrl } from './api.ts';
import { type CompareSide, compareView } from './compare-model.ts';
import { $, button, el } from './dom.ts';
import { state } from './state.ts';

/** Compares runs `a` and `b` (keys) in the panel; a refusal is shown in it. */
export async function openCompare(a: string, b: string): Promise<void> {
  const panel = $('compare-panel');
  panel.hidden = false;
  $('compare-verdict').textContent = 'comparing…';
  $('compare-totals').replaceChildren();
  $('compare-body').replaceChildren();
  const response = await fetch(apiUrl('/api/compare', { a, b }));
  const json = (await response.json()) as ComparedRuns & { error?: string };
  if (!response.ok) {
    $('compare-verdict').textContent = `cannot compare: ${json.error ?? response.status}`;
    return;
  }
  drawComparison(json);
}

function sideCell(side: CompareSide): HTMLTableCellElement {
  const cell = el('td', side.present ? 'side' : 'side absent');
  for (const line of side.lines) {
    const node = el('div', 'line', line.text);
    if (line.changed) node.dataset.changed = 'true';
    cell.append(node);
  }
  return cell;
}

function drawComparison(comparison: ComparedRuns): void {
  const view = compareView(comparison);
  panel().dataset.a = view.a.key;
  panel().dataset.b = view.b.key;
  $('compare-a').textContent = `${view.a.runId} (${view.a.status})`;
  $('compare-b').textContent = `${view.b.runId} (${view.b.status})`;
  $('compare-verdict').textContent = view.verdict;
  $('compare-totals').replaceChildren(...view.totals.map((text) => el('li', '', text)));
  $('compare-not').textContent = view.notCompared;
  const rows = view.rows.map((row) => {
    const tr = el('tr', row.first ? 'first-difference' : '');
    tr.dataset.step = String(row.step);
    tr.dataset.label = row.label;
    const head = el('th', '', `step ${row.step}`);
    head.scope = 'row';
    const label = el('td', 'label');
    label.append(el('span', 'badge', row.label));
    if (row.first) label.append(el('div', 'first-note', 'first difference'));
    if (row.fields) label.append(el('div', 'fields', row.fields));
    tr.append(head, label, sideCell(row.a), sideCell(row.b));
    return tr;
  });
  $('compare-body').replaceChildren(...rows);
  rows.find((row) => row.classList.contains('first-difference'))?.scrollIntoView({ block: 'center' });
}

const panel = () => $('compare-panel');

/** The panel's close button (and Escape while it is open). */
export function setUpCompare(): void {
  const close = () => {
    panel().hidden = true;
  };
  $('compare-close').addEventListener('click', close);
  $('compare-picked').addEventListener('click', () => {
    const [a, b] = state.picked;
    if (a && b) void openCompare(a, b);
  });
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && !panel().hidden) close();
  });
}

/** A `compare with parent` button for a fork's lineage line. */
export function compareWithParentButton(parentKey: string, childKey: string): HTMLButtonElement {
  const node = button('run-link', 'compare with parent', 'compare-parent');
  node.addEventListener('click', () => void openCompare(parentKey, childKey));
  return node;
}
