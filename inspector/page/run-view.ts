/**
 * The open run's header and chart: its id, status and state, the transition just taken, why it
 * ended (outcome), its forks (lineage), the time-travel notice, its context and what it awaits.
 */
import type { RunSummary } from '../inspection-store.ts';
import { edgeText, highlight } from './chart.ts';
import { compareWithParentButton } from './compare.ts';
import { machineId } from './config.ts';
import { $, button, el } from './dom.ts';
import { renderAwait } from './forms.ts';
import { openRun } from './navigate.ts';
import { outcomeBadge, outcomeMessage, outcomeWhere } from './outcome-text.ts';
import { loadPage } from './run-list.ts';
import { selectedRun, state } from './state.ts';
import { leafStates } from './states.ts';

/** Draws the open run (or the frame travelled to) in the chart pane. */
export function renderChart(): void {
  const run = selectedRun();
  const shown = state.travel ? state.travel.frame : run;
  const ours = run !== undefined && run.machineId === machineId();
  highlight(ours && shown ? shown.activeStates : [], ours && shown ? shown.lastTransition : null);
  $('run-title').textContent = run ? run.runId : 'no run selected';
  $('run-title').title = run ? run.runId : '';
  $('copy-id').hidden = !run;
  const session = $('run-session');
  session.hidden = !run?.sessionId;
  session.textContent = run?.sessionId ? `session ${run.sessionId}` : '';
  const status = $('run-status');
  status.textContent = run ? run.status : '–';
  status.dataset.status = run ? run.status : 'none';
  $('run-state').textContent = shown ? leafStates(shown.activeStates ?? [], machineId()) : '';
  const last = $('last-transition');
  const transition = shown?.lastTransition;
  last.textContent = transition ? `took ${transition.edgeIds.map(edgeText).join(' → ')}` : '';
  last.title = transition ? transition.edgeIds.join('\n') : '';
  const context = state.travel ? state.travel.frame.context : state.openContext;
  $('context').textContent =
    run && context !== null && context !== undefined ? JSON.stringify(context, null, 2) : '–';
  renderOutcome(run);
  renderLineage(run);
  $('context-when').textContent = state.travel ? `(as of event #${state.travel.n})` : '';
  $('travel').hidden = !state.travel;
  $('travel-text').textContent = state.travel ? `viewing the run as of event #${state.travel.n}` : '';
  renderAwait();
}

/** Forks: where this run came from, and the runs forked from it; each opens on click. */
function renderLineage(run: RunSummary | undefined): void {
  const box = $('lineage');
  const fork = run?.fork;
  box.hidden = !fork;
  box.replaceChildren();
  if (!fork) return;
  const link = (runId: string) => {
    const node = button('run-link', runId);
    node.title = runId;
    node.addEventListener('click', () => openRun(runId, false));
    return node;
  };
  if (fork.parent) {
    box.append(
      el('span', '', 'forked from '),
      link(fork.parent.runId),
      el('span', '', ` at event #${fork.parent.atEvent} `),
      compareWithParentButton(fork.parent.runId, run!.key),
      el('span', '', ' '),
    );
  }
  if (fork.children?.length) {
    box.append(el('span', '', 'forked into '));
    for (const child of fork.children) box.append(link(child), ' ');
  }
}

/** Why the run ended as it did (failed, canceled, capped): cause, error name, step. */
function renderOutcome(run: RunSummary | undefined): void {
  const box = $('outcome');
  const outcome = run?.outcome;
  box.hidden = !outcome;
  if (!outcome) return;
  box.dataset.kind = outcome.kind;
  const kind = $('outcome-kind');
  kind.textContent = outcome.kind;
  kind.dataset.status = outcomeBadge(outcome);
  $('outcome-error').textContent = outcome.errorName || '';
  $('outcome-step').textContent = outcomeWhere(outcome);
  $('outcome-message').textContent = outcomeMessage(outcome);
  $('outcome-causes').replaceChildren(
    ...(outcome.causes ?? []).map((cause) => el('li', '', `caused by ${cause}`)),
  );
}

/** The session button lists the runs of the open run's session (`session=<id>` in the search box). */
export function setUpSessionFilter(): void {
  $('run-session').addEventListener('click', () => {
    const sessionId = selectedRun()?.sessionId;
    if (!sessionId) return;
    $<HTMLInputElement>('run-filter').value = `session=${sessionId}`;
    void loadPage(null);
  });
}

/** The whole run id, however the list cuts it: copied, or selected for Ctrl+C without a clipboard. */
export function setUpCopyId(): void {
  const copy = $('copy-id');
  copy.addEventListener('click', () => {
    const run = selectedRun();
    if (!run) return;
    const done = (text: string) => {
      copy.textContent = text;
      setTimeout(() => {
        copy.textContent = 'copy id';
      }, 1500);
    };
    const selectTitle = () => {
      const range = document.createRange();
      range.selectNodeContents($('run-title'));
      const chosen = getSelection();
      chosen?.removeAllRanges();
      chosen?.addRange(range);
      done('selected');
    };
    if (navigator.clipboard?.writeText)
      navigator.clipboard.writeText(run.runId).then(() => done('copied'), selectTitle);
    else selectTitle();
  });
}
