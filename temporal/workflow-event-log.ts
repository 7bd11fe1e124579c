/**
 * The run's events and last tool results as the workflow keeps them (docs/temporal.md §History):
 * a bounded buffer for the `events` query and the result, handed on at continue-as-new. Workflow
 * code: Temporal's sandbox, no Node built-ins.
 *
 * @module
 */
import type { RunEvent } from '../run/run-events.ts';
import type { ToolResultJSON } from '../tools/tool-result.ts';
import {
  type ContinuedRun,
  DEFAULT_RESULT_BYTES,
  DEFAULT_RESULT_TOOL_RESULTS,
  type RunEventsPage,
  type RunWorkflowInput,
} from './workflow-types.ts';

/** Events kept in the workflow for the `events` query (older ones are in the history only). */
const EVENT_BUFFER = 2_000;
/** Events handed to the next execution when the workflow continues as new. */
const EVENTS_CARRIED = 100;
/**
 * JSON characters the events handed on hold at most (the newest that fit): with results inline up
 * to the workers' `inlineBytes`, 100 events could otherwise hold megabytes.
 */
const EVENTS_CARRIED_BYTES = 256 * 1024;

/** One execution's event buffer and last tool results, continuing those an earlier one handed on. */
export class WorkflowEventLog {
  private readonly events: RunEvent[];
  private readonly toolResults: ToolResultJSON[];
  /** The last results only: what the workflow keeps, hands on and returns does not grow with the run. */
  private readonly keepResults: number;
  /** JSON characters of results returned or handed on, at most. */
  private readonly resultBytes: number;
  /** Tool results of the whole run. */
  toolResultCount: number;
  /** The position of the oldest event kept. */
  first: number;

  constructor(input: RunWorkflowInput) {
    const { continued } = input;
    this.events = continued?.events ?? [];
    this.keepResults = input.resultToolResults ?? DEFAULT_RESULT_TOOL_RESULTS;
    this.resultBytes = input.resultBytes ?? DEFAULT_RESULT_BYTES;
    this.toolResults = (continued?.toolResults ?? []).slice(-this.keepResults);
    this.toolResultCount = continued?.toolResultCount ?? this.toolResults.length;
    this.first = continued?.first ?? 0;
  }

  /** Events emitted so far (positions 0 … count − 1). */
  get count(): number {
    return this.first + this.events.length;
  }

  push(event: RunEvent): void {
    if (event.type === 'tool_result') {
      this.toolResults.push(event.result as ToolResultJSON);
      if (this.toolResults.length > this.keepResults) this.toolResults.shift();
      this.toolResultCount += 1;
    }
    this.events.push(event);
    if (this.events.length > EVENT_BUFFER) {
      this.events.shift();
      this.first += 1;
    }
  }

  /** The `events` query: the kept events from position `from` on. */
  page(from: number): RunEventsPage {
    return { events: this.events.slice(Math.max(0, from - this.first)), next: this.count, first: this.first };
  }

  /** The last tool results within `resultBytes`, oldest first: what the result and the next execution get. */
  results(): ToolResultJSON[] {
    return newestWithin(this.toolResults, this.resultBytes);
  }

  /** What the next execution continues from: the newest events that fit, the results, the counts. */
  handedOn(): Pick<ContinuedRun, 'events' | 'first' | 'toolResults' | 'toolResultCount'> {
    const carried = newestWithin(this.events.slice(-EVENTS_CARRIED), EVENTS_CARRIED_BYTES);
    return {
      events: carried,
      first: this.count - carried.length,
      toolResults: this.results(),
      toolResultCount: this.toolResultCount,
    };
  }
}

/** The newest of `items` whose JSON adds up to at most `chars` characters (oldest first). */
function newestWithin<T>(items: readonly T[], chars: number): T[] {
  let total = 0;
  let from = items.length;
  while (from > 0) {
    total += JSON.stringify(items[from - 1]).length;
    if (total > chars) break;
    from--;
  }
  return items.slice(from);
}
