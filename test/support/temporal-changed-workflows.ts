// The run workflow with a deliberately nondeterministic change (issue 14): a timer before the
// run starts, which no recorded history has. Replaying a recorded history against it must fail.
import { sleep } from '@temporalio/workflow';
import { toolwardenRun as original } from '../../temporal/workflows.ts';

export * from '../../temporal/workflows.ts';

export async function toolwardenRun(...args: Parameters<typeof original>): ReturnType<typeof original> {
  await sleep(1);
  return original(...args);
}
