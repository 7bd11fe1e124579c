/**
 * The Temporal workflow that hosts a run (issue 14, docs/temporal.md §Workflow): the same run
 * machine as the in-process runtime, inside Temporal's deterministic sandbox. Planner turns,
 * validation, tool calls and policy reviews are activities (see `activities.ts`), supplied to the
 * machine with `provide()`; waits are durable timers; answers arrive as signals and an update.
 * This module (and everything it imports) must stay free of Node built-ins: the worker bundles it.
 * Every function it exports is a workflow type to Temporal: the steps live in run-workflow.ts and
 * the modules beside it (workflow-activities, -event-log, -transcript, -status, -continue, -signals).
 *
 * @module
 */
import { RunWorkflow } from './run-workflow.ts';
import type { RunWorkflowInput, RunWorkflowResult } from './workflow-types.ts';

export * from './workflow-signals.ts';

/** The run workflow (`RUN_WORKFLOW`): one execution of a run, until it ends or continues as new. */
export async function toolwardenRun(input: RunWorkflowInput): Promise<RunWorkflowResult> {
  return new RunWorkflow(input).run();
}
