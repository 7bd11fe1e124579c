/**
 * The inspector page's script (inspector-page.ts): plain browser JS, no build step; it only ever
 * talks to the page's own origin and writes server data with `textContent`.
 */
export const PAGE_SCRIPT = String.raw`
(() => {
  'use strict';
  const token = new URLSearchParams(location.search).get('token') || '';
  const machineId = document.body.dataset.machineId;
  const config = JSON.parse(document.getElementById('inspector-config').textContent);
  const MAX_RUN_ROWS = 200;
  const LOG_PAGE = 200;
  // Summaries of the runs loaded (the hello's page and the pages after it), newest first; the
  // context and log of the one run open (fetched when it is opened, then kept live by the stream).
  const runs = new Map();
  const logs = new Map();
  let listing = { total: 0, matched: 0, next: null };
  let openContext = null;
  let opening = null; // { key, buffered: [] } while the opened run's log is on its way
  let streamId = null;
  const clientId = Math.random().toString(36).slice(2, 12);
  let selected = null;
  let travel = null; // { seq, frame } while looking at the past
  let logEarlier = 0; // entries the server keeps before the ones loaded here (the open run's)
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const views = Array.from(document.querySelectorAll('#canvas .view'));
  const viewOf = (name) => views.find((view) => view.dataset.view === name);
  let current = viewOf('simple') || viewOf('full');
  const nodesIn = (view, selector) => Array.from(view.querySelectorAll(selector));

  const leaf = (active) => active
    .filter((id) => !active.some((other) => other.startsWith(id + '.')))
    .map((id) => id.startsWith(machineId + '.') ? id.slice(machineId.length + 1) : id)
    .join(', ');
  // An edge of the full chart as 'event [guard]': the first line of its tooltip, without actions.
  const edgeText = (id) => {
    const edge = nodesIn(viewOf('full'), '[data-edge-id]').find((node) => node.dataset.edgeId === id);
    const title = edge && edge.querySelector('title');
    if (!title) return id;
    return title.textContent.split('\n')[0].split(' / ')[0];
  };
  const newest = () => Array.from(runs.values()).sort((a, b) => b.startedAt - a.startedAt)[0];
  const follow = () => $('follow').checked;

  // ---- runs list: filter, at most MAX_RUN_ROWS rows drawn -------------------------------------
  function matches(run) {
    const status = $('status-filter').value;
    if (status && run.status !== status) return false;
    const text = $('run-filter').value.trim().toLowerCase();
    if (!text) return true;
    const labels = run.labels ? Object.entries(run.labels).map(([k, v]) => k + '=' + v).join(' ') : '';
    return (run.runId + ' ' + (run.agentId || '') + ' ' + labels).toLowerCase().includes(text);
  }
  // Rows are kept by run key and redrawn only when what they show changes, and runs that start
  // while the pointer (or focus) is in the list wait above it: a list redrawn every frame under
  // a stream of runs lost every click (the press and the release fell on different rows).
  const rows = new Map(); // key -> { item, shows }
  let holdAfter = null; // while held: the newest startedAt shown when the hold began
  function runRow(run) {
    const why = run.outcome ? run.outcome.errorName || run.outcome.message : '';
    const metaText = [run.agentId, leaf(run.activeStates || []), why].filter(Boolean).join(' · ');
    const shows = [run.status, run.runId, run.source, metaText, run.key === selected].join('\n');
    let row = rows.get(run.key);
    if (row && row.shows === shows) return row.item;
    if (!row) {
      const item = el('li');
      item.tabIndex = 0;
      item.dataset.key = run.key;
      const choose = () => {
        $('follow').checked = run.key === (newest() && newest().key);
        select(run.key);
      };
      item.addEventListener('click', choose);
      item.addEventListener('keydown', (event) => { if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); choose(); } });
      row = { item, shows: '' };
      rows.set(run.key, row);
    }
    const item = row.item;
    row.shows = shows;
    item.className = run.key === selected ? 'selected' : '';
    item.dataset.status = run.status;
    const badge = el('span', 'badge', run.status);
    badge.dataset.status = run.status;
    const id = el('span', 'run-id', run.runId);
    id.title = run.runId;
    const meta = el('span', 'run-meta', metaText);
    if (run.source !== 'native') meta.append(' ', el('span', 'source', 'via ' + run.source));
    item.replaceChildren(badge, id, meta);
    item.title = run.runId + ' (' + run.source + ')';
    return item;
  }
  function renderRuns() {
    const list = $('run-list');
    const matching = Array.from(runs.values()).filter(matches).sort((a, b) => b.startedAt - a.startedAt);
    const held = holdAfter === null ? 0 : matching.filter((run) => run.startedAt > holdAfter && run.key !== selected).length;
    const shown = held ? matching.filter((run) => run.startedAt <= holdAfter || run.key === selected) : matching;
    const filtered = $('status-filter').value || $('run-filter').value.trim();
    $('run-count').textContent = filtered ? '(' + listing.matched + ' of ' + listing.total + ')' : '(' + listing.total + ')';
    // Above the list, not in it: the rows under the pointer do not move.
    $('show-newer').hidden = held === 0;
    $('show-newer').textContent = '+' + held;
    $('show-newer').title = held + ' newer run' + (held > 1 ? 's' : '') + ', started while the pointer was on the list: show them';
    $('show-newer').setAttribute('aria-label', $('show-newer').title);
    const items = [];
    if (shown.length === 0) items.push(el('li', 'empty', listing.total === 0 ? 'No runs yet.' : 'No run matches.'));
    const drawn = shown.slice(0, MAX_RUN_ROWS);
    for (const run of drawn) items.push(runRow(run));
    if (shown.length > MAX_RUN_ROWS) items.push(el('li', 'more', (shown.length - MAX_RUN_ROWS) + ' more: narrow the filter'));
    else if (listing.next) {
      const more = el('li', 'more');
      const button = el('button', '', 'load older runs');
      button.type = 'button';
      button.id = 'load-more';
      button.addEventListener('click', () => loadPage(listing.next));
      more.append(button);
      items.push(more);
    }
    // Forget rows no longer drawn; move only the ones out of place.
    const kept = new Set(drawn.map((run) => run.key));
    for (const key of Array.from(rows.keys())) if (!kept.has(key)) rows.delete(key);
    const wanted = new Set(items);
    for (const child of Array.from(list.children)) if (!wanted.has(child)) child.remove();
    items.forEach((item, i) => { if (list.children[i] !== item) list.insertBefore(item, list.children[i] || null); });
  }
  const runList = $('run-list');
  const keyboardIn = () => runList.querySelector(':focus-visible') !== null;
  const hold = () => {
    if (holdAfter !== null) return;
    holdAfter = Math.max(0, ...Array.from(runs.values()).filter(matches).map((run) => run.startedAt));
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
  runList.addEventListener('focusin', () => { if (keyboardIn()) hold(); });
  runList.addEventListener('pointerleave', () => setTimeout(release, 0));
  runList.addEventListener('focusout', () => setTimeout(release, 0));
  // A page of summaries from the server, for the filter shown (or the page after 'before').
  let pageRequest = 0;
  function loadPage(before) {
    const ask = ++pageRequest;
    const params = new URLSearchParams({ token, limit: '100' });
    if (before) params.set('before', before);
    if ($('status-filter').value) params.set('status', $('status-filter').value);
    if ($('run-filter').value.trim()) params.set('q', $('run-filter').value.trim());
    return fetch('/api/runs?' + params).then((response) => response.json()).then((page) => {
      if (ask !== pageRequest) return;
      if (!before) for (const key of Array.from(runs.keys())) if (key !== selected) runs.delete(key);
      for (const run of page.runs) runs.set(run.key, run);
      listing = { total: page.total, matched: page.matched, next: page.next };
      renderRuns();
    });
  }

  // The first page of runs comes with the page (issue 27 item 1): drawn now, before the chart is
  // set up and one round trip before the stream's hello, which replaces it.
  const firstPage = JSON.parse($('inspector-runs').textContent);
  if (firstPage) {
    for (const run of firstPage.runs) runs.set(run.key, run);
    listing = { total: firstPage.total, matched: firstPage.matched, next: firstPage.next };
    renderRuns();
  }

  // ---- chart: highlight, views, zoom and pan ----------------------------------------------
  function highlight(activeStates, lastTransition) {
    const taken = new Set(lastTransition ? lastTransition.edgeIds : []);
    const fullActive = new Set(activeStates);
    for (const view of views) {
      const simple = view.dataset.view === 'simple';
      const active = simple ? new Set(activeStates.map((id) => config.shownAs && config.shownAs[id]).filter(Boolean)) : fullActive;
      for (const node of nodesIn(view, '[data-state-id]')) node.classList.toggle('active', active.has(node.dataset.stateId));
      for (const node of nodesIn(view, '[data-edge-id]')) {
        const id = node.dataset.edgeId;
        const ways = simple ? (config.via && config.via[id]) || [] : [];
        const way = ways.findIndex((edges) => edges.every((edge) => taken.has(edge)));
        const on = simple ? way >= 0 : taken.has(id);
        node.classList.toggle('taken', on);
        if (simple) labelWay(node, on && config.wayLabels && config.wayLabels[id] ? config.wayLabels[id][way] : null);
      }
    }
  }
  // A taken arrow of the simple view names the way actually taken (plan.error, not planInvalid);
  // its summary label comes back when another is taken.
  function labelWay(node, label) {
    const text = node.querySelector('.edge-float text.edge-label');
    if (!text) return;
    if (text.dataset.summary === undefined) text.dataset.summary = text.textContent;
    const want = label || text.dataset.summary;
    if (text.textContent === want) return;
    text.textContent = want;
    const bg = node.querySelector('.edge-float .edge-label-bg');
    const x = Number(text.getAttribute('x'));
    const width = want.length * Number(text.getAttribute('font-size') || 11) * 0.6 + 8;
    bg.setAttribute('x', String(x - width / 2));
    bg.setAttribute('width', String(width));
  }
  function renderChart() {
    const run = selected ? runs.get(selected) : undefined;
    const shown = travel ? travel.frame : run;
    const ours = run && run.machineId === machineId;
    highlight(ours && shown ? shown.activeStates : [], ours && shown ? shown.lastTransition : null);
    $('run-title').textContent = run ? run.runId : 'no run selected';
    $('run-title').title = run ? run.runId : '';
    $('copy-id').hidden = !run;
    const status = $('run-status');
    status.textContent = run ? run.status : '–';
    status.dataset.status = run ? run.status : 'none';
    $('run-state').textContent = shown ? leaf(shown.activeStates || []) : '';
    const last = $('last-transition');
    const transition = shown && shown.lastTransition;
    last.textContent = transition ? 'took ' + transition.edgeIds.map(edgeText).join(' → ') : '';
    last.title = transition ? transition.edgeIds.join('\n') : '';
    const context = travel ? travel.frame.context : openContext;
    $('context').textContent = run && context !== null && context !== undefined ? JSON.stringify(context, null, 2) : '–';
    renderOutcome(run);
    renderLineage(run);
    $('context-when').textContent = travel ? '(as of event #' + travel.seq + ')' : '';
    $('travel').hidden = !travel;
    $('travel-text').textContent = travel ? 'viewing the run as of event #' + travel.seq : '';
    renderAwait();
  }

  // Forks: where this run came from, and the runs forked from it; each opens on click.
  function renderLineage(run) {
    const box = $('lineage');
    const fork = run && run.fork;
    box.hidden = !fork;
    box.replaceChildren();
    if (!fork) return;
    const link = (runId) => {
      const button = el('button', 'run-link', runId);
      button.type = 'button';
      button.title = runId;
      button.addEventListener('click', () => { $('follow').checked = false; select(runId); });
      return button;
    };
    if (fork.parent) box.append(el('span', '', 'forked from '), link(fork.parent.runId), el('span', '', ' at event #' + fork.parent.atEvent + ' '));
    if (fork.children && fork.children.length) {
      box.append(el('span', '', 'forked into '));
      for (const child of fork.children) box.append(link(child), ' ');
    }
  }

  // Why the run ended as it did (failed, canceled, capped): cause, error name, step.
  function renderOutcome(run) {
    const box = $('outcome');
    const outcome = run && run.outcome;
    box.hidden = !outcome;
    if (!outcome) return;
    box.dataset.kind = outcome.kind;
    const kind = $('outcome-kind');
    kind.textContent = outcome.kind;
    kind.dataset.status = outcome.kind === 'failed' ? 'failed' : outcome.kind === 'canceled' ? 'canceled' : 'hint';
    $('outcome-error').textContent = outcome.errorName || '';
    const where = outcome.step ? 'in ' + outcome.step + (outcome.turnId ? ', turn ' + outcome.turnId.replace(/^.*:t/, '') : '') + (outcome.event ? ' (on ' + outcome.event + ')' : '') : '';
    $('outcome-step').textContent = where;
    $('outcome-message').textContent = outcome.kind === 'capped' ? 'finalized early: ' + outcome.message : outcome.kind === 'finalized' ? 'finalized by policy: ' + outcome.message : outcome.message;
    const causes = $('outcome-causes');
    causes.replaceChildren(...(outcome.causes || []).map((cause) => el('li', '', 'caused by ' + cause)));
  }

  const zoom = { scale: 1, x: 0, y: 0 };
  const svgSize = () => {
    const svg = current.querySelector('svg');
    return { width: Number(svg.getAttribute('width')), height: Number(svg.getAttribute('height')) };
  };
  function applyZoom() {
    $('canvas').style.transform = 'translate(' + zoom.x + 'px,' + zoom.y + 'px) scale(' + zoom.scale + ')';
    $('zoom-level').textContent = Math.round(zoom.scale * 100) + '%';
    for (const svg of document.querySelectorAll('#canvas svg')) svg.classList.toggle('labels-on', zoom.scale >= 1.25);
  }
  // Fit (issue 27 item 3): the whole chart when its text stays 11 px or more; else its width,
  // scrolled from the top; else the smallest scale at which its text is 11 px, panned from the
  // top left. Floating edge labels (11 px, shown on demand) follow the same scale.
  const READABLE_PX = 11;
  const smallestFont = (view) => {
    const sizes = nodesIn(view, 'text:not(.edge-label)').map((text) => Number(text.getAttribute('font-size')) || 13);
    return sizes.length ? Math.min(...sizes) : 13;
  };
  function fit() {
    const box = $('viewport').getBoundingClientRect();
    const { width, height } = svgSize();
    const readable = READABLE_PX / smallestFont(current);
    const whole = Math.min(box.width / width, box.height / height);
    const across = box.width / width;
    zoom.scale = whole >= readable ? whole : Math.max(across, readable);
    zoom.x = Math.max(0, (box.width - width * zoom.scale) / 2);
    zoom.y = whole >= readable ? (box.height - height * zoom.scale) / 2 : 0;
    applyZoom();
  }
  function zoomAt(factor, cx, cy) {
    const next = Math.min(4, Math.max(0.1, zoom.scale * factor));
    zoom.x = cx - ((cx - zoom.x) * next) / zoom.scale;
    zoom.y = cy - ((cy - zoom.y) * next) / zoom.scale;
    zoom.scale = next;
    applyZoom();
  }
  const center = () => { const box = $('viewport').getBoundingClientRect(); return [box.width / 2, box.height / 2]; };
  $('zoom-in').addEventListener('click', () => zoomAt(1.25, ...center()));
  $('zoom-out').addEventListener('click', () => zoomAt(0.8, ...center()));
  $('zoom-fit').addEventListener('click', fit);
  $('zoom-actual').addEventListener('click', () => { zoom.scale = 1; zoom.x = 0; zoom.y = 0; applyZoom(); });
  $('viewport').addEventListener('wheel', (event) => {
    event.preventDefault();
    const box = $('viewport').getBoundingClientRect();
    zoomAt(event.deltaY < 0 ? 1.1 : 1 / 1.1, event.clientX - box.left, event.clientY - box.top);
  }, { passive: false });
  let drag = null;
  $('viewport').addEventListener('pointerdown', (event) => {
    drag = { x: event.clientX, y: event.clientY, zx: zoom.x, zy: zoom.y };
    $('viewport').classList.add('dragging');
    $('viewport').setPointerCapture(event.pointerId);
  });
  $('viewport').addEventListener('pointermove', (event) => {
    if (!drag) return;
    zoom.x = drag.zx + event.clientX - drag.x;
    zoom.y = drag.zy + event.clientY - drag.y;
    applyZoom();
  });
  const endDrag = () => { drag = null; $('viewport').classList.remove('dragging'); };
  $('viewport').addEventListener('pointerup', endDrag);
  $('viewport').addEventListener('pointercancel', endDrag);
  $('viewport').addEventListener('keydown', (event) => {
    const step = 40;
    if (event.key === '+' || event.key === '=') zoomAt(1.25, ...center());
    else if (event.key === '-') zoomAt(0.8, ...center());
    else if (event.key === '0') fit();
    else if (event.key === 'ArrowLeft') { zoom.x += step; applyZoom(); }
    else if (event.key === 'ArrowRight') { zoom.x -= step; applyZoom(); }
    else if (event.key === 'ArrowUp') { zoom.y += step; applyZoom(); }
    else if (event.key === 'ArrowDown') { zoom.y -= step; applyZoom(); }
    else return;
    event.preventDefault();
  });
  function showView(name) {
    const view = viewOf(name);
    if (!view) return;
    for (const other of views) other.hidden = other !== view;
    current = view;
    $('view-simple').setAttribute('aria-pressed', String(name === 'simple'));
    $('view-full').setAttribute('aria-pressed', String(name === 'full'));
    fit();
  }
  // The full chart's floating labels say 'event [guard]' (its layout leaves labels out).
  for (const node of nodesIn(viewOf('full'), '[data-edge-id]')) {
    const text = node.querySelector('.edge-float text.edge-label');
    if (!text) continue;
    text.dataset.summary = edgeText(node.dataset.edgeId);
    labelWay(node, null);
  }
  // The whole run id, however the list cuts it: copied, or selected for Ctrl+C when the
  // clipboard is not available.
  $('copy-id').addEventListener('click', () => {
    const run = selected && runs.get(selected);
    if (!run) return;
    const done = (text) => { $('copy-id').textContent = text; setTimeout(() => { $('copy-id').textContent = 'copy id'; }, 1500); };
    const selectTitle = () => { const range = document.createRange(); range.selectNodeContents($('run-title')); const chosen = getSelection(); chosen.removeAllRanges(); chosen.addRange(range); done('selected'); };
    if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(run.runId).then(() => done('copied'), selectTitle);
    else selectTitle();
  });
  $('view-simple').addEventListener('click', () => showView('simple'));
  $('view-full').addEventListener('click', () => showView('full'));
  new ResizeObserver(() => fit()).observe($('viewport'));

  // ---- what a waiting run awaits, and answering it -------------------------------------------
  function lastAwait(key) {
    const entries = logs.get(key) || [];
    for (let i = entries.length - 1; i >= 0; i--) {
      const entry = entries[i];
      if (entry.type.startsWith('await_')) return entry;
      if (entry.type === 'state_changed' && entry.data && String(entry.data.previous || '').startsWith('awaiting.') && !String(entry.data.state).startsWith('awaiting.')) return null;
    }
    return null;
  }
  function renderAwait() {
    const run = selected ? runs.get(selected) : undefined;
    const entry = run && run.status === 'awaiting' && !travel ? lastAwait(run.key) : null;
    const panel = $('await-panel');
    const body = $('await-body');
    if (!entry) { panel.hidden = true; body.replaceChildren(); panel.dataset.seq = ''; return; }
    if (panel.dataset.seq === String(entry.seq)) return; // already drawn (keep what was typed)
    panel.dataset.seq = String(entry.seq);
    panel.hidden = false;
    $('answer-error').hidden = true;
    body.replaceChildren();
    const d = entry.data || {};
    // A refused answer is shown and the form stays open; \`refused\` may place it (a 422 edit's hint).
    const send = (payload, button, refused) => {
      $('answer-error').hidden = true;
      button.disabled = true;
      fetch('/api/runs/' + encodeURIComponent(run.key) + '/answer?token=' + encodeURIComponent(token), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-toolwarden-inspector': 'answer' },
        body: JSON.stringify(payload),
      }).then((response) => response.json().then((json) => ({ ok: response.ok, status: response.status, json }))).then(({ ok, status, json }) => {
        button.disabled = false;
        if (!ok && refused && refused(status, json)) return;
        if (!ok) { $('answer-error').textContent = json.error || 'refused'; $('answer-error').hidden = false; return; }
        body.append(el('p', 'sent', 'Sent.'));
      }, (error) => {
        button.disabled = false;
        $('answer-error').textContent = String(error);
        $('answer-error').hidden = false;
      });
    };
    const readOnly = () => body.append(el('p', 'note', 'This inspector is read-only: answer through the app.'));
    if (entry.type === 'await_clarification') {
      const c = d.clarification || {};
      body.append(el('p', 'question', c.question || ''));
      if (c.missingFields && c.missingFields.length) body.append(el('p', 'note', 'missing: ' + c.missingFields.join(', ')));
      if (c.exampleInput !== undefined) body.append(el('pre', '', 'example: ' + JSON.stringify(c.exampleInput, null, 2)));
      if (!config.canAnswer) return readOnly();
      const text = el('textarea');
      text.id = 'answer-text';
      text.setAttribute('aria-label', 'Answer');
      const button = el('button', '', 'Answer');
      button.id = 'answer-send';
      button.type = 'button';
      button.addEventListener('click', () => send({ kind: 'clarification', id: c.id, answer: text.value }, button));
      const actions = el('div', 'actions');
      actions.append(button);
      body.append(text, actions);
    } else if (entry.type === 'await_confirmation') {
      const c = d.confirmation || {};
      body.append(el('p', 'question', c.prompt || 'Approve?'));
      if (c.details !== undefined) body.append(el('pre', '', JSON.stringify(c.details, null, 2)));
      if (!config.canAnswer) return readOnly();
      const reason = el('input');
      reason.id = 'answer-reason';
      reason.placeholder = 'reason (optional)';
      const approve = el('button', '', 'Approve');
      approve.id = 'answer-approve';
      approve.type = 'button';
      const deny = el('button', '', 'Deny');
      deny.id = 'answer-deny';
      deny.type = 'button';
      const edits = confirmationEdits(c, body);
      approve.addEventListener('click', () => {
        const changed = edits.changed();
        if (!changed) return;
        const payload = { kind: 'confirmation', id: c.id, approved: true, reason: reason.value };
        if (Object.keys(changed).length) payload.edits = changed;
        send(payload, approve, edits.refused);
      });
      deny.addEventListener('click', () => send({ kind: 'confirmation', id: c.id, approved: false, reason: reason.value }, deny));
      const actions = el('div', 'actions');
      actions.append(approve, deny, reason);
      body.append(actions);
    } else if (entry.type === 'await_external_tools') {
      const calls = (d.externalTools && d.externalTools.calls) || [];
      body.append(el('p', 'question', calls.length + ' external tool call(s): give their results as JSON'));
      body.append(el('pre', '', JSON.stringify(calls, null, 2)));
      if (!config.canAnswer) return readOnly();
      const text = el('textarea');
      text.id = 'answer-results';
      text.value = JSON.stringify(calls.map((call) => ({ toolCallId: call.toolCallId, result: null })), null, 2);
      const button = el('button', '', 'Send results');
      button.id = 'answer-send';
      button.type = 'button';
      button.addEventListener('click', () => {
        let results;
        try { results = JSON.parse(text.value); } catch (error) {
          $('answer-error').textContent = 'not JSON: ' + error.message;
          $('answer-error').hidden = false;
          return;
        }
        send({ kind: 'toolResults', results }, button);
      });
      const actions = el('div', 'actions');
      actions.append(button);
      body.append(text, actions);
    }
  }

  // Approve with edits (issue 24 item 4): per call to confirm, its input as editable JSON (from the
  // confirmation's details, else the run's batch). \`changed()\` gives toolCallId → the inputs
  // changed (null when one is not JSON, shown by it); \`refused\` puts a 422's hint by its call.
  function confirmationEdits(c, body) {
    const details = Array.isArray(c.details) ? c.details : [];
    const pending = (openContext && openContext.batch && openContext.batch.pending) || [];
    const fields = [];
    for (const toolCallId of c.toolCallIds || []) {
      const detail = details.find((d) => d && d.toolCallId === toolCallId);
      const call = pending.find((p) => p.toolCallId === toolCallId);
      const input = detail && detail.input !== undefined ? detail.input : call ? (call.preparedInput !== undefined ? call.preparedInput : call.input) : {};
      const tool = (detail && detail.tool) || (call && call.name) || '';
      const box = el('div', 'edit-call');
      box.dataset.toolCallId = toolCallId;
      const label = el('label', 'note', 'input of ' + tool + ' (' + toolCallId + '), editable');
      const text = el('textarea', 'answer-edit');
      text.dataset.toolCallId = toolCallId;
      text.setAttribute('aria-label', 'Input of ' + tool + ' (' + toolCallId + ')');
      text.value = JSON.stringify(input, null, 2);
      label.append(text);
      const hint = el('p', 'error edit-hint');
      hint.dataset.toolCallId = toolCallId;
      hint.setAttribute('role', 'alert');
      hint.hidden = true;
      box.append(label, hint);
      body.append(box);
      fields.push({ toolCallId, text, hint, original: text.value });
    }
    return {
      changed() {
        const out = {};
        for (const field of fields) {
          field.hint.hidden = true;
          if (field.text.value === field.original) continue;
          try { out[field.toolCallId] = JSON.parse(field.text.value); } catch (problem) {
            field.hint.textContent = 'not JSON: ' + problem.message;
            field.hint.hidden = false;
            return null;
          }
        }
        return out;
      },
      refused(status, json) {
        const field = status === 422 && fields.find((f) => f.toolCallId === json.toolCallId);
        if (!field) return false;
        const h = json.retryHint;
        const issues = h && h.issues ? h.issues.map((issue) => (issue.path || '(input)') + ': ' + issue.message) : [];
        field.hint.textContent = [h ? h.message : json.error].concat(issues).join('\n');
        field.hint.hidden = false;
        return true;
      },
    };
  }

  // ---- timeline: tool calls by turn ----------------------------------------------------------
  function traceLink(run) {
    const tc = openContext && openContext.traceContext;
    const parent = tc && typeof tc.traceparent === 'string' ? tc.traceparent.split('-')[1] : null;
    if (!config.jaegerUrl || !run) return null;
    const base = config.jaegerUrl.replace(/\/$/, '');
    // The run's own trace when its context carries one; else a search by its run id.
    return parent ? base + '/trace/' + parent : base + '/search?tags=' + encodeURIComponent(JSON.stringify({ 'toolwarden.run.id': run.runId }));
  }
  // Fork from a step (issue 27 item 4): the call's input (as it was then) or the clarification's
  // answer, editable, then POST /fork; the new run opens.
  function forkButton(open) {
    const button = el('button', 'fork', 'fork');
    button.type = 'button';
    button.title = 'Start a new run from this step';
    button.addEventListener('click', (event) => { event.stopPropagation(); open(); });
    return button;
  }
  function forkForm(run, seq, call, clarification) {
    const detail = $('timeline-detail');
    detail.replaceChildren();
    detail.hidden = false;
    const form = el('div', 'fork-form');
    form.id = 'fork-form';
    const text = el('textarea');
    text.id = 'fork-edit';
    const error = el('p', 'error');
    error.hidden = true;
    const send = el('button', '', call ? 'fork with this input' : 'fork with this answer');
    send.id = 'fork-send';
    send.type = 'button';
    form.append(el('p', 'note', call ? 'Fork from ' + call.tool + ' (' + call.id + '): its input, as the planner sent it' : 'Fork from: ' + ((clarification && clarification.question) || 'the clarification') + ' — the answer'), text, send, error);
    detail.append(form);
    if (call) {
      text.value = '…';
      // The call as the run held it once it had run: in its batch, or in the transcript.
      fetch('/api/runs/' + encodeURIComponent(run.key) + '/frame?seq=' + (call.endSeq || seq) + '&token=' + encodeURIComponent(token))
        .then((response) => response.ok ? response.json() : null)
        .then((frame) => {
          const context = (frame && frame.context) || {};
          const pending = (context.batch && context.batch.pending) || [];
          const sent = (context.messages || []).flatMap((message) => message.toolCalls || []);
          const found = pending.find((p) => p.toolCallId === call.id) || sent.find((p) => p.toolCallId === call.id);
          text.value = JSON.stringify(found ? (found.input !== undefined ? found.input : found.args) : {}, null, 2);
        });
    }
    send.addEventListener('click', () => {
      let edit;
      if (call) {
        try { edit = { input: JSON.parse(text.value) }; } catch (problem) { error.textContent = 'not JSON: ' + problem.message; error.hidden = false; return; }
      } else edit = { answer: text.value };
      send.disabled = true;
      fetch('/api/runs/' + encodeURIComponent(run.key) + '/fork?token=' + encodeURIComponent(token), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-toolwarden-inspector': 'fork' },
        body: JSON.stringify({ seq, edit }),
      }).then((response) => response.json().then((json) => ({ ok: response.ok, json }))).then(({ ok, json }) => {
        send.disabled = false;
        if (!ok) { error.textContent = json.error || 'refused'; error.hidden = false; return; }
        $('follow').checked = false;
        select(json.runId);
      }, (problem) => { send.disabled = false; error.textContent = String(problem); error.hidden = false; });
    });
  }
  function renderTimeline() {
    const list = $('timeline');
    list.replaceChildren();
    $('timeline-detail').hidden = true;
    const run = selected ? runs.get(selected) : undefined;
    const entries = selected ? logs.get(selected) || [] : [];
    const calls = new Map();
    const order = [];
    for (const entry of entries) {
      const d = entry.data || {};
      if (entry.type === 'tool_call_scheduled') {
        const call = { id: d.toolCallId, tool: d.tool, turn: d.turnId, start: entry.at, attempt: d.attempt, seq: entry.seq };
        calls.set(d.toolCallId, call);
        order.push(call);
      } else if (entry.type === 'tool_result' && d.result) {
        let call = calls.get(d.result.toolCallId);
        if (!call) {
          call = { id: d.result.toolCallId, tool: d.result.name, turn: String(d.result.toolCallId).replace(/:c\d+$/, ''), start: entry.at };
          calls.set(call.id, call);
          order.push(call);
        }
        call.end = entry.at;
        call.endSeq = entry.seq;
        call.result = d.result;
      } else if (entry.type.startsWith('await_')) {
        order.push({ note: entry.type.replace('await_', 'awaits ') , at: entry.at, seq: entry.seq, clarification: entry.type === 'await_clarification' ? d.clarification : null });
      } else if (entry.type === 'policy_decision' && d.decision) {
        order.push({ note: 'policy ' + d.decision.policy + ': ' + (d.decision.kinds || []).join(', '), at: entry.at });
      }
    }
    let turn = null;
    let count = 0;
    for (const item of order) {
      if (item.note) {
        const note = el('li', 'note', item.note);
        if (item.clarification && config.canFork) note.append(' ', forkButton(() => forkForm(run, item.seq, null, item.clarification)));
        list.append(note);
        continue;
      }
      if (item.turn !== turn) {
        turn = item.turn;
        list.append(el('li', 'turn', 'turn ' + String(turn).replace(/^.*:t/, '')));
      }
      count++;
      const row = el('li', 'call');
      row.tabIndex = 0;
      row.dataset.toolCallId = item.id;
      const r = item.result;
      const outcome = !r ? 'running' : r.error ? (r.retryHint ? r.retryHint.reason : 'error') : 'ok';
      const badge = el('span', 'badge', outcome);
      badge.dataset.status = !r ? 'running' : r.error ? (r.retryHint ? 'hint' : 'error') : 'ok';
      row.append(el('span', 'tool', item.tool), el('span', 'ms', item.end ? (item.end - item.start) + ' ms' : '…'), badge);
      if (config.canFork && item.seq !== undefined) row.append(forkButton(() => forkForm(run, item.seq, item, null)));
      const open = () => {
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
        detail.append(JSON.stringify({ toolCallId: item.id, attempt: item.attempt, result: r }, null, 2));
        detail.hidden = false;
      };
      row.addEventListener('click', open);
      row.addEventListener('keydown', (event) => { if (event.key === 'Enter') open(); });
      list.append(row);
    }
    $('timeline-count').textContent = count ? '(' + count + ' calls' + (logEarlier ? ' in the newest ' + entries.length + ' log entries' : '') + ')' : '';
  }

  // ---- event log, windowed, and time travel ----------------------------------------------------
  function summary(entry) {
    const d = entry.data || {};
    switch (entry.type) {
      case 'state_changed': return (d.previous ? d.previous + ' → ' : '') + d.state;
      case 'run_started': return d.agentId || '';
      case 'await_clarification': return d.clarification ? d.clarification.question : '';
      case 'await_confirmation': return d.confirmation ? d.confirmation.prompt : '';
      case 'tool_call_scheduled': return d.tool + ' #' + d.attempt + (d.edited ? ' · input edited' + (d.edited.by ? ' by ' + d.edited.by : '') : '');
      case 'tool_result': return d.result ? d.result.name + (d.result.error ? ' ✗ ' + d.result.error.message : ' ✓') : '';
      case 'retry_hint': return d.hint ? d.hint.reason + ' ' + d.hint.tool : '';
      case 'policy_decision': return d.decision ? d.decision.policy + ': ' + (d.decision.kinds || []).join(', ') : '';
      case 'planner_note': return d.note || '';
      case 'run_completed': return d.finalResponse ? d.finalResponse.text : '';
      case 'run_failed': return d.error ? d.error.message : '';
      case 'run_canceled': return d.reason || '';
      case 'run_forked': return d.childRunId === d.runId ? 'from ' + d.parentRunId + ' at #' + d.atEvent : 'into ' + d.childRunId + ' at #' + d.atEvent;
      default: {
        const text = JSON.stringify(d);
        return text && text.length > 140 ? text.slice(0, 140) + '…' : (text || '');
      }
    }
  }
  function logItem(entry, run) {
    const item = el('li');
    item.tabIndex = 0;
    item.dataset.seq = String(entry.seq);
    item.dataset.type = entry.type;
    item.dataset.kind = entry.kind;
    if (travel && travel.seq === entry.seq) item.classList.add('current');
    const head = el('div', 'head');
    const offset = run ? (entry.at - run.startedAt) / 1000 : 0;
    head.append(el('time', '', '+' + offset.toFixed(3) + 's'), el('span', 'type', entry.type), el('span', 'summary', summary(entry)));
    // The payload is drawn when the entry is first opened: a run's log opens without it.
    const choose = () => {
      if (!item.querySelector('pre')) item.append(el('pre', '', JSON.stringify(entry.data, null, 2)));
      item.classList.toggle('open');
      timeTravel(entry.seq);
    };
    head.addEventListener('click', choose);
    item.addEventListener('keydown', (event) => { if (event.key === 'Enter') choose(); });
    item.append(head);
    return item;
  }
  function renderLog() {
    const list = $('event-log');
    list.replaceChildren();
    const run = selected ? runs.get(selected) : undefined;
    const entries = selected ? logs.get(selected) || [] : [];
    list.append(...entries.map((entry) => logItem(entry, run)));
    $('log-earlier').hidden = logEarlier === 0;
    renderLogCount(run, entries);
  }
  function renderLogCount(run, entries) {
    const total = entries.length + logEarlier;
    $('log-count').textContent = run ? '(' + total + (logEarlier ? ', newest ' + entries.length + ' shown' : '') + (run.dropped ? ', ' + run.dropped + ' dropped' : '') + ')' : '';
  }
  // The open run's log comes a page at a time, newest first (issue 27 item 1): earlier pages on request.
  $('log-earlier').addEventListener('click', () => {
    const key = selected;
    const entries = logs.get(key) || [];
    if (!key || !entries.length) return;
    $('log-earlier').disabled = true;
    fetch('/api/runs/' + encodeURIComponent(key) + '/log?before=' + entries[0].seq + '&limit=' + LOG_PAGE + '&token=' + encodeURIComponent(token))
      .then((response) => response.ok ? response.json() : null)
      .then((page) => {
        $('log-earlier').disabled = false;
        if (!page || selected !== key || logs.get(key) !== entries) return;
        entries.unshift(...page.log);
        logEarlier = page.earlier;
        renderTimeline();
        renderLog();
      }, () => { $('log-earlier').disabled = false; });
  });
  function timeTravel(seq) {
    const key = selected;
    const entries = logs.get(key) || [];
    if (entries.length && entries[entries.length - 1].seq === seq) { travel = null; renderChart(); renderLog(); return; }
    fetch('/api/runs/' + encodeURIComponent(key) + '/frame?seq=' + seq + '&token=' + encodeURIComponent(token))
      .then((response) => response.ok ? response.json() : null)
      .then((frame) => {
        if (selected !== key) return;
        if (!frame) { $('travel').hidden = false; $('travel-text').textContent = 'no snapshot kept from event #' + seq; return; }
        travel = { seq, frame };
        renderChart();
        for (const item of document.querySelectorAll('#event-log li')) item.classList.toggle('current', item.dataset.seq === String(seq));
      });
  }
  $('travel-live').addEventListener('click', () => { travel = null; renderChart(); renderLog(); });

  // Opening a run: its context and log from the server; from then on the stream sends its new
  // log entries and contexts (held back here until the log arrives, then merged by seq).
  function select(key) {
    if (key !== selected) { travel = null; logEarlier = 0; logs.clear(); openContext = null; }
    const changed = key !== selected;
    selected = key;
    for (const row of document.querySelectorAll('#run-list li[data-key]')) row.classList.toggle('selected', row.dataset.key === key);
    if (!changed && key) return;
    renderChart();
    renderTimeline();
    renderLog();
    if (!key || !streamId) return;
    const pending = { key, buffered: [] };
    opening = pending;
    fetch('/api/runs/' + encodeURIComponent(key) + '?stream=' + encodeURIComponent(streamId) + '&token=' + encodeURIComponent(token))
      .then((response) => response.ok ? response.json() : null)
      .then((detail) => {
        if (opening !== pending) return;
        opening = null;
        if (!detail || selected !== key) return;
        const last = detail.log.length ? detail.log[detail.log.length - 1].seq : 0;
        logs.set(key, detail.log.concat(pending.buffered.filter((entry) => entry.seq > last)));
        logEarlier = detail.earlier || 0;
        if (pending.context !== undefined) openContext = pending.context;
        else openContext = detail.context;
        // The summary that came with the log, unless an update the stream brought meanwhile is newer.
        const known = runs.get(key);
        if (!known || detail.run.updatedAt >= known.updatedAt) runs.set(key, Object.assign(known || {}, detail.run));
        renderChart();
        renderTimeline();
        renderLog();
        document.body.dataset.opened = key;
      });
  }
  function maybeFollow(run) {
    if (!selected || (follow() && run.key !== selected && run.startedAt >= (runs.get(selected) || { startedAt: 0 }).startedAt)) {
      select(run.key);
      return true;
    }
    return false;
  }
  let filterTimer = null;
  $('run-filter').addEventListener('input', () => { clearTimeout(filterTimer); filterTimer = setTimeout(() => loadPage(null), 150); });
  $('status-filter').addEventListener('change', () => loadPage(null));

  // ---- the live stream -------------------------------------------------------------------------
  let pendingRuns = false;
  const renderRunsSoon = () => {
    if (pendingRuns) return;
    pendingRuns = true;
    requestAnimationFrame(() => { pendingRuns = false; renderRuns(); });
  };
  const connection = $('connection');
  let source = null;
  let retry = null;
  function showDropped(reason) {
    const notice = $('dropped');
    notice.hidden = false;
    $('dropped-reason').textContent = reason;
  }
  function connect() {
    if (retry) { clearTimeout(retry); retry = null; }
    if (source) source.close();
    source = new EventSource('/events?token=' + encodeURIComponent(token) + '&client=' + clientId);
    source.addEventListener('open', () => { connection.dataset.state = 'open'; connection.textContent = 'live'; });
    // The list stays as it was while the browser reconnects: it is replaced by the next hello.
    source.addEventListener('error', () => {
      if (connection.dataset.state === 'dropped') return;
      connection.dataset.state = 'closed';
      connection.textContent = 'reconnecting…';
    });
    source.addEventListener('dropped', (message) => {
      // The server ended this stream and says why: say so, keep what is shown, reconnect later.
      source.close();
      connection.dataset.state = 'dropped';
      connection.textContent = 'disconnected';
      showDropped(JSON.parse(message.data).reason + ' — reconnecting in 5 s');
      retry = setTimeout(connect, 5000);
    });
    source.addEventListener('hello', (message) => {
      const data = JSON.parse(message.data);
      streamId = data.stream;
      if (data.droppedBefore) showDropped('reconnected after: ' + data.droppedBefore);
      else $('dropped').hidden = true;
      if ($('status-filter').value || $('run-filter').value.trim()) { loadPage(null); }
      else {
        runs.clear();
        for (const run of data.runs) runs.set(run.key, run);
        listing = { total: data.total, matched: data.matched, next: data.next };
      }
      renderRuns();
      const first = newest();
      const keep = selected;
      selected = null;
      select(keep || (first ? first.key : null));
    });
    source.addEventListener('run', (message) => {
      const run = JSON.parse(message.data).run;
      if (runs.has(run.key)) { runs.set(run.key, run); renderRunsSoon(); return; }
      listing.total++;
      if (!matches(run)) { renderRunsSoon(); return; }
      listing.matched++;
      runs.set(run.key, run);
      maybeFollow(run);
      renderRunsSoon();
    });
    source.addEventListener('update', (message) => {
      const data = JSON.parse(message.data);
      const run = runs.get(data.key);
      if (!run) return; // not on a page loaded here
      Object.assign(run, data.changes);
      renderRunsSoon();
      if (data.key === selected && !travel) renderChart();
    });
    source.addEventListener('context', (message) => {
      const data = JSON.parse(message.data);
      if (data.key !== selected) return;
      if (opening && opening.key === data.key) { opening.context = data.context; return; }
      openContext = data.context;
      if (!travel) renderChart();
    });
    source.addEventListener('log', (message) => {
      const data = JSON.parse(message.data);
      if (data.key !== selected) return;
      if (opening && opening.key === data.key) { opening.buffered.push(data.entry); return; }
      const entries = logs.get(data.key) || [];
      entries.push(data.entry);
      logs.set(data.key, entries);
      $('event-log').append(logItem(data.entry, runs.get(data.key)));
      const run = runs.get(data.key);
      renderLogCount(run, entries);
      if (data.entry.type.startsWith('await_') || data.entry.type.startsWith('tool_') || data.entry.type === 'policy_decision') renderTimeline();
      if (data.entry.type.startsWith('await_')) renderAwait();
    });
    source.addEventListener('removed', (message) => {
      const key = JSON.parse(message.data).key;
      listing.total = Math.max(0, listing.total - 1);
      if (runs.delete(key)) listing.matched = Math.max(0, listing.matched - 1);
      if (selected === key) {
        const first = newest();
        select(first ? first.key : null);
      }
      renderRunsSoon();
    });
  }
  $('dropped-reconnect').addEventListener('click', connect);
  connect();
  $('follow').addEventListener('change', () => { if (follow()) { const first = newest(); if (first) select(first.key); } });
  fit();
})();
`;
