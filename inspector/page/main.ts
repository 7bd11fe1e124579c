/**
 * The inspector page's script (inspector-page.ts serves it, bundled by scripts/build-page.mjs into
 * inspector/page-bundle.ts): it only ever talks to the page's own origin and writes server data
 * with `textContent`. The order matters for the first row (issue 27 item 1): the first page of
 * runs, which comes with the HTML, is drawn before anything else is set up.
 */
import type { RunPage } from '../inspection-store.ts';
import { fitChart, setUpChart } from './chart.ts';
import { setUpCompare } from './compare.ts';
import { $ } from './dom.ts';
import { setUpEventLog } from './event-log.ts';
import { setOpener } from './navigate.ts';
import { following, select } from './open-run.ts';
import { renderRuns, setUpRunList, takePage } from './run-list.ts';
import { setUpCopyId, setUpSessionFilter } from './run-view.ts';
import { newestRun } from './state.ts';
import { connect } from './stream.ts';

setOpener(select);
const firstPage = JSON.parse($('inspector-runs').textContent ?? 'null') as RunPage | null;
if (firstPage) {
  takePage(firstPage, false);
  renderRuns();
}
setUpChart();
setUpCopyId();
setUpSessionFilter();
setUpRunList();
setUpEventLog();
setUpCompare();
$('dropped-reconnect').addEventListener('click', connect);
connect();
$('follow').addEventListener('change', () => {
  const first = newestRun();
  if (following() && first) select(first.key);
});
fitChart();
