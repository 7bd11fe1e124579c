/**
 * What a waiting run awaits, and the forms that answer it (when the page may): a clarification's
 * answer, a confirmation's approve / deny with each call's input editable (sent as `edits`),
 * external tool calls' results as JSON, and per call in doubt done / not done / failed. A refused answer is shown and the form stays open.
 */
import type { LogEntry, RunSummary } from '../inspection-store.ts';
import { apiUrl, postJson, runPath } from './api.ts';
import { pageConfig } from './config.ts';
import { $, button, el } from './dom.ts';
import { type RefusedEdit, readEdits, refusedEditText } from './edit-form.ts';
import { type ConfirmationData, dataOf } from './event-data.ts';
import {
  type InDoubtCallData,
  type InDoubtChoice,
  type InDoubtResolutionBody,
  inDoubtCallLine,
  readInDoubtResolutions,
  refusedCall,
} from './in-doubt-form.ts';
import { contextOf } from './run-context.ts';
import { selectedRun, state } from './state.ts';

/** The await the run is in: its last `await_*` entry, unless the log shows it left `awaiting` since. */
function lastAwait(key: string): LogEntry | null {
  const entries = state.logs.get(key) ?? [];
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    if (entry.type.startsWith('await_')) return entry;
    const d = dataOf(entry);
    if (
      entry.type === 'state_changed' &&
      String(d.previous ?? '').startsWith('awaiting.') &&
      !String(d.state).startsWith('awaiting.')
    ) {
      return null;
    }
  }
  return null;
}

function showError(text: string): void {
  $('answer-error').textContent = text;
  $('answer-error').hidden = false;
}

/** Refusals a form places itself (a 422 edit's hint by its call); false: shown under the form. */
type Refused = (status: number, json: RefusedEdit) => boolean;

/**
 * Sends an answer (to `answer`, or `in-doubt` for resolutions); a refused one is shown under the
 * form (or placed by `refused`), which stays open.
 */
function send(
  run: RunSummary,
  payload: unknown,
  sender: HTMLButtonElement,
  refused?: Refused,
  path: 'answer' | 'in-doubt' = 'answer',
): void {
  $('answer-error').hidden = true;
  sender.disabled = true;
  postJson<RefusedEdit>(apiUrl(runPath(run.key, path)), 'answer', payload).then(
    ({ ok, status, json }) => {
      sender.disabled = false;
      if (!ok && refused?.(status, json)) return;
      if (!ok) return showError(json.error || 'refused');
      $('await-body').append(el('p', 'sent', 'Sent.'));
    },
    (error) => {
      sender.disabled = false;
      showError(String(error));
    },
  );
}

function actions(...nodes: HTMLElement[]): HTMLDivElement {
  const box = el('div', 'actions');
  box.append(...nodes);
  return box;
}

/** Draws what the open run awaits (once per await: what was typed is kept while it waits). */
export function renderAwait(): void {
  const run = selectedRun();
  const entry = run && run.status === 'awaiting' && !state.travel ? lastAwait(run.key) : null;
  const panel = $('await-panel');
  const body = $('await-body');
  if (!run || !entry) {
    panel.hidden = true;
    body.replaceChildren();
    panel.dataset.seq = '';
    return;
  }
  if (panel.dataset.seq === String(entry.seq)) return;
  panel.dataset.seq = String(entry.seq);
  panel.hidden = false;
  $('answer-error').hidden = true;
  body.replaceChildren();
  const d = dataOf(entry);
  const { canAnswer } = pageConfig();
  const readOnly = () => body.append(el('p', 'note', 'This inspector is read-only: answer through the app.'));
  if (entry.type === 'await_clarification') {
    const c = d.clarification ?? {};
    body.append(el('p', 'question', c.question ?? ''));
    if (c.missingFields?.length) body.append(el('p', 'note', `missing: ${c.missingFields.join(', ')}`));
    if (c.exampleInput !== undefined) {
      body.append(el('pre', '', `example: ${JSON.stringify(c.exampleInput, null, 2)}`));
    }
    if (!canAnswer) {
      readOnly();
      return;
    }
    const text = el('textarea');
    text.id = 'answer-text';
    text.setAttribute('aria-label', 'Answer');
    const answer = button('', 'Answer', 'answer-send');
    answer.addEventListener('click', () =>
      send(run, { kind: 'clarification', id: c.id, answer: text.value }, answer),
    );
    body.append(text, actions(answer));
  } else if (entry.type === 'await_confirmation') {
    const c = d.confirmation ?? {};
    body.append(el('p', 'question', c.prompt || 'Approve?'));
    if (c.details !== undefined) body.append(el('pre', '', JSON.stringify(c.details, null, 2)));
    if (!canAnswer) {
      readOnly();
      return;
    }
    const reason = el('input');
    reason.id = 'answer-reason';
    reason.placeholder = 'reason (optional)';
    const approve = button('', 'Approve', 'answer-approve');
    const deny = button('', 'Deny', 'answer-deny');
    const edits = confirmationEdits(c, body);
    approve.addEventListener('click', () => {
      const changed = edits.changed();
      if (!changed) return;
      const payload: Record<string, unknown> = {
        kind: 'confirmation',
        id: c.id,
        approved: true,
        reason: reason.value,
      };
      if (Object.keys(changed).length) payload.edits = changed;
      send(run, payload, approve, edits.refused);
    });
    deny.addEventListener('click', () =>
      send(run, { kind: 'confirmation', id: c.id, approved: false, reason: reason.value }, deny),
    );
    body.append(actions(approve, deny, reason));
  } else if (entry.type === 'await_external_tools') {
    const calls = d.externalTools?.calls ?? [];
    body.append(el('p', 'question', `${calls.length} external tool call(s): give their results as JSON`));
    body.append(el('pre', '', JSON.stringify(calls, null, 2)));
    if (!canAnswer) {
      readOnly();
      return;
    }
    const text = el('textarea');
    text.id = 'answer-results';
    text.value = JSON.stringify(
      calls.map((call) => ({ toolCallId: call.toolCallId, result: null })),
      null,
      2,
    );
    const results = button('', 'Send results', 'answer-send');
    results.addEventListener('click', () => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text.value);
      } catch (error) {
        return showError(`not JSON: ${(error as Error).message}`);
      }
      send(run, { kind: 'toolResults', results: parsed }, results);
    });
    body.append(text, actions(results));
  } else if (entry.type === 'await_in_doubt') {
    const calls = d.inDoubt?.calls ?? [];
    body.append(
      el(
        'p',
        'question',
        `${calls.length} call(s) started and never recorded finished: did each happen? Check the system it acts on, then resolve each.`,
      ),
    );
    if (!canAnswer) {
      for (const call of calls) body.append(el('p', 'note', inDoubtCallLine(call)));
      readOnly();
      return;
    }
    const form = inDoubtForm(calls, body);
    const resolve = button('', 'Resolve', 'in-doubt-send');
    resolve.addEventListener('click', () => {
      const resolutions = form.read();
      if (resolutions) send(run, { resolutions }, resolve, form.refused, 'in-doubt');
    });
    body.append(actions(resolve));
  }
}

/**
 * Per call in doubt (issue 34 item 3): its tool, id, start and input, and the person's answer:
 * done (with the output it returned, JSON), not done (run it now, under the same idempotency
 * key) or failed (with the message the planner sees). `read()` gives the resolutions, or null
 * with the problem shown by its call; `refused` puts a 409 that names a call by it.
 */
function inDoubtForm(
  calls: InDoubtCallData[],
  body: HTMLElement,
): { read(): Record<string, InDoubtResolutionBody> | null; refused: Refused } {
  const fields = calls.map((call, index) => {
    const box = el('div', 'in-doubt-call');
    box.dataset.toolCallId = call.toolCallId;
    box.append(
      el('p', 'note', inDoubtCallLine(call)),
      el('pre', '', JSON.stringify(call.input ?? {}, null, 2)),
    );
    const choices = el('div', 'in-doubt-choices');
    choices.setAttribute('role', 'radiogroup');
    choices.setAttribute('aria-label', `Outcome of ${call.name ?? 'tool'} (${call.toolCallId})`);
    const radios = (
      [
        ['done', 'done: it happened'],
        ['not_done', 'not done: run it'],
        ['failed', 'failed'],
      ] as const
    ).map(([value, text]) => {
      const label = el('label', 'in-doubt-choice');
      const radio = el('input');
      radio.type = 'radio';
      radio.name = `in-doubt-${index}`;
      radio.value = value;
      label.append(radio, ` ${text}`);
      choices.append(label);
      return radio;
    });
    const outputLabel = el('label', 'note', 'output it returned (JSON)');
    const output = el('textarea', 'in-doubt-output');
    output.setAttribute('aria-label', `Output of ${call.toolCallId}`);
    outputLabel.append(output);
    const errorLabel = el('label', 'note', 'why it failed (the planner is told)');
    const error = el('input', 'in-doubt-error');
    error.setAttribute('aria-label', `Error of ${call.toolCallId}`);
    errorLabel.append(error);
    const hint = el('p', 'error in-doubt-hint');
    hint.setAttribute('role', 'alert');
    hint.hidden = true;
    const choice = (): InDoubtChoice => (radios.find((radio) => radio.checked)?.value ?? '') as InDoubtChoice;
    const show = () => {
      outputLabel.hidden = choice() !== 'done';
      errorLabel.hidden = choice() !== 'failed';
    };
    for (const radio of radios) radio.addEventListener('change', show);
    show();
    box.append(choices, outputLabel, errorLabel, hint);
    body.append(box);
    return { toolCallId: call.toolCallId, choice, output, error, hint };
  });
  const ids = fields.map((field) => field.toolCallId);
  return {
    read() {
      for (const field of fields) field.hint.hidden = true;
      const read = readInDoubtResolutions(
        fields.map((field) => ({
          toolCallId: field.toolCallId,
          choice: field.choice(),
          output: field.output.value,
          error: field.error.value,
        })),
      );
      if (read.ok) return read.resolutions;
      const field = fields.find((f) => f.toolCallId === read.toolCallId)!;
      field.hint.textContent = read.problem;
      field.hint.hidden = false;
      return null;
    },
    refused(_status, json) {
      const id = refusedCall(json.error ?? '', ids);
      const field = fields.find((f) => f.toolCallId === id);
      if (!field) return false;
      field.hint.textContent = json.error ?? 'refused';
      field.hint.hidden = false;
      return true;
    },
  };
}

/**
 * Approve with edits (issue 24 item 4): per call to confirm, its input as editable JSON (from the
 * confirmation's details, else the run's batch). `changed()` gives toolCallId → the inputs
 * changed (null when one is not JSON, shown by it); `refused` puts a 422's hint by its call.
 */
function confirmationEdits(
  c: ConfirmationData,
  body: HTMLElement,
): { changed(): Record<string, unknown> | null; refused: Refused } {
  const details = Array.isArray(c.details)
    ? (c.details as { toolCallId?: string; input?: unknown; tool?: string }[])
    : [];
  const pending = contextOf(state.openContext).batch?.pending ?? [];
  const fields: { toolCallId: string; text: HTMLTextAreaElement; hint: HTMLElement; original: string }[] = [];
  for (const toolCallId of c.toolCallIds ?? []) {
    const detail = details.find((d) => d?.toolCallId === toolCallId);
    const call = pending.find((p) => p.toolCallId === toolCallId);
    const input =
      detail && detail.input !== undefined
        ? detail.input
        : call
          ? call.preparedInput !== undefined
            ? call.preparedInput
            : call.input
          : {};
    const tool = detail?.tool || call?.name || '';
    const box = el('div', 'edit-call');
    box.dataset.toolCallId = toolCallId;
    const label = el('label', 'note', `input of ${tool} (${toolCallId}), editable`);
    const text = el('textarea', 'answer-edit');
    text.dataset.toolCallId = toolCallId;
    text.setAttribute('aria-label', `Input of ${tool} (${toolCallId})`);
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
      for (const field of fields) field.hint.hidden = true;
      const read = readEdits(
        fields.map((field) => ({
          toolCallId: field.toolCallId,
          value: field.text.value,
          original: field.original,
        })),
      );
      if (read.ok) return read.edits;
      const field = fields.find((f) => f.toolCallId === read.toolCallId)!;
      field.hint.textContent = read.problem;
      field.hint.hidden = false;
      return null;
    },
    refused(status, json) {
      const field = status === 422 ? fields.find((f) => f.toolCallId === json.toolCallId) : undefined;
      if (!field) return false;
      field.hint.textContent = refusedEditText(json);
      field.hint.hidden = false;
      return true;
    },
  };
}
