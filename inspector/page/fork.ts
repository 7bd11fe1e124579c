/**
 * Fork from a step (issue 27 item 4): the call's input (as it was then) or the clarification's
 * answer, editable, then `POST /fork`; the new run opens.
 */
import type { RunFrame, RunSummary } from '../inspection-store.ts';
import { apiUrl, getJson, postJson, runPath } from './api.ts';
import { $, button, el } from './dom.ts';
import type { ClarificationData } from './event-data.ts';
import { openRun } from './navigate.ts';
import { contextOf } from './run-context.ts';
import type { TimelineCall } from './timeline-model.ts';

/** The `fork` button of a timeline row. */
export function forkButton(open: () => void): HTMLButtonElement {
  const node = button('fork', 'fork');
  node.title = 'Start a new run from this step';
  node.addEventListener('click', (event) => {
    event.stopPropagation();
    open();
  });
  return node;
}

/** The fork form, in the timeline's detail box: from `call` (its input) or from a clarification (the answer). */
export function forkForm(
  run: RunSummary,
  seq: number,
  call: TimelineCall | null,
  clarification: ClarificationData | null,
): void {
  const detail = $('timeline-detail');
  detail.replaceChildren();
  detail.hidden = false;
  const form = el('div', 'fork-form');
  form.id = 'fork-form';
  const text = el('textarea');
  text.id = 'fork-edit';
  const error = el('p', 'error');
  error.hidden = true;
  const send = button('', call ? 'fork with this input' : 'fork with this answer', 'fork-send');
  const what = call
    ? `Fork from ${call.tool} (${call.id}): its input, as the planner sent it`
    : `Fork from: ${clarification?.question || 'the clarification'} — the answer`;
  form.append(el('p', 'note', what), text, send, error);
  detail.append(form);
  const fail = (message: string) => {
    error.textContent = message;
    error.hidden = false;
  };
  if (call) {
    text.value = '…';
    // The call as the run held it once it had run: in its batch, or in the transcript.
    void getJson<RunFrame>(apiUrl(runPath(run.key, 'frame'), { seq: String(call.endSeq || seq) })).then(
      (frame) => {
        const context = contextOf(frame?.context);
        const pending = context.batch?.pending ?? [];
        const sent = (context.messages ?? []).flatMap((message) => message.toolCalls ?? []);
        const found =
          pending.find((p) => p.toolCallId === call.id) ?? sent.find((p) => p.toolCallId === call.id);
        const input = found
          ? found.input !== undefined
            ? found.input
            : (found as { args?: unknown }).args
          : {};
        text.value = JSON.stringify(input, null, 2);
      },
    );
  }
  send.addEventListener('click', () => {
    let edit: { input: unknown } | { answer: string };
    if (call) {
      try {
        edit = { input: JSON.parse(text.value) };
      } catch (problem) {
        return fail(`not JSON: ${(problem as Error).message}`);
      }
    } else edit = { answer: text.value };
    send.disabled = true;
    postJson<{ error?: string; runId?: string }>(apiUrl(runPath(run.key, 'fork')), 'fork', {
      seq,
      edit,
    }).then(
      ({ ok, json }) => {
        send.disabled = false;
        if (!ok || !json.runId) return fail(json.error || 'refused');
        openRun(json.runId, false);
      },
      (problem) => {
        send.disabled = false;
        fail(String(problem));
      },
    );
  });
}
