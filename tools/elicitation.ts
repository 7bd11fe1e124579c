/**
 * What a running tool asks a person through its run (MCP's `elicitation/create`, form mode,
 * docs/mcp.md §Elicitation): the run leaves `executing` for `awaiting.elicitation` until the
 * answer, the call still running. A form with fields is put as a clarification
 * (`run.awaiting.kind === 'clarification'`, answered with `provideClarification`), one without
 * fields as a confirmation (`confirm`: approved is accept, denied is decline).
 */
export interface ElicitationRequest {
  /** What the person is asked (the server's `message`). */
  message: string;
  /**
   * The form: MCP's `requestedSchema`, a flat JSON Schema object of primitive properties. No
   * properties (or none given): a yes/no question.
   */
  requestedSchema?: {
    type?: 'object';
    properties?: Record<string, Record<string, unknown>>;
    required?: string[];
  };
}

/**
 * The person's answer as the run gives it to the tool: `accept` with the clarification's text
 * (`answer`, absent for a confirmation), `decline` (a denied confirmation, or the run ended:
 * canceled, closed), or `cancel` (nobody answered before the call ended: its timeout, the run's
 * time budget).
 */
export type ElicitationAnswer =
  | { action: 'accept'; answer?: string }
  | { action: 'decline'; reason?: string }
  | { action: 'cancel' };

/**
 * Where a call's elicitations go: set by the run's `executeTool` port; `reply` is called once.
 * Absent outside a run (a bare `callTool`, a Temporal activity): the tool cannot ask.
 */
export type ElicitationChannel = (
  request: ElicitationRequest,
  reply: (answer: ElicitationAnswer) => void,
) => void;
