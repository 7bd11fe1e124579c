import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RunEvent } from '../run/run-events.ts';
import { ApprovalEditRefusedError } from '../runtime/approval-edits.ts';
import type { RunHandle } from '../runtime/run-handle.ts';

/**
 * What a gateway session's run awaits, answered by its MCP client (docs/mcp.md §Gateway): a
 * confirmation is put to the client by elicitation (`approve`, and for one held call an edited
 * `input`, asked again with the hint when the tool boundary refuses it); a clarification a policy
 * asked for is left to the client's model, which has the hint.
 *
 * @module
 */

/** Times a client may send an edit the tool boundary refuses before the call is denied. */
export const MAX_EDIT_ROUNDS = 3;

/** A confirmation is asked of the client (elicitation); a clarification a policy asked for is left to the client's model. */
export async function answerAwait(server: Server, run: RunHandle, event: RunEvent): Promise<void> {
  try {
    if (event.type === 'await_clarification') {
      await run.provideClarification({
        id: event.clarification.id,
        answer: 'The MCP client was sent the hint and decides how to retry.',
      });
    } else if (event.type === 'await_confirmation') {
      const { id, prompt, details, toolCallIds } = event.confirmation;
      let approved = false;
      let reason = 'the MCP client cannot be asked (no elicitation capability)';
      if (server.getClientCapabilities()?.elicitation) {
        // Approve with edits (issue 24 item 4, safety): a confirmation holding one call offers an
        // `input` field; an edit the tool boundary refuses is asked again with its hint.
        const editable = toolCallIds?.length === 1 ? toolCallIds[0] : undefined;
        let refusal = '';
        for (let round = 0; ; round++) {
          const answer = await server.elicitInput({
            message: `${refusal}${prompt}\n${JSON.stringify(details ?? [], null, 2)}`,
            requestedSchema: {
              type: 'object',
              properties: {
                approve: { type: 'boolean', title: 'Approve', description: prompt },
                ...(editable === undefined
                  ? {}
                  : {
                      input: {
                        type: 'string',
                        title: 'Edited input (JSON)',
                        description: 'Approve the call with this input instead; leave empty to keep it',
                      },
                    }),
              },
              required: ['approve'],
            },
          });
          approved = answer.action === 'accept' && answer.content?.approve === true;
          reason = approved ? '' : `the MCP client answered ${answer.action}`;
          const edit = answer.content?.input;
          if (!approved || editable === undefined || typeof edit !== 'string' || edit.trim() === '') break;
          const problem = await confirmWithEdit(run, id, editable, edit);
          if (problem === undefined) return;
          if (round + 1 >= MAX_EDIT_ROUNDS) {
            approved = false;
            reason = `the MCP client's edits were refused ${MAX_EDIT_ROUNDS} times: ${problem}`;
            break;
          }
          refusal = `Your edited input was refused: ${problem}\nEdit it again, or approve or deny the call as it is.\n\n`;
        }
      }
      await run.confirm({ id, approved, by: 'mcp-client', ...(approved ? {} : { reason }) });
    }
  } catch {
    // The run ended or the answer was refused: nothing waits on it any more.
  }
}

/** Approves with the client's edit; what was wrong with it when refused (the hint's message), else undefined. */
async function confirmWithEdit(
  run: RunHandle,
  id: string,
  toolCallId: string,
  edit: string,
): Promise<string | undefined> {
  let input: unknown;
  try {
    input = JSON.parse(edit);
  } catch (err) {
    return `not JSON (${err instanceof Error ? err.message : String(err)})`;
  }
  try {
    await run.confirm({ id, approved: true, by: 'mcp-client', edits: { [toolCallId]: input } });
    return undefined;
  } catch (err) {
    if (err instanceof ApprovalEditRefusedError) return err.message;
    throw err;
  }
}
