import type {
  ApprovalFacts,
  PendingCall,
  RememberedApproval,
  RememberScope,
} from '../../machines/run-context.ts';
import { callFingerprint } from '../../policies/call-fingerprint.ts';
import type { PolicyDecisionRecord } from '../../run/run-events.ts';
import type { RunUnapproved } from '../../tools/define-tool.ts';

/**
 * How a runtime treats approvals (`createRuntime({ approvals })`, docs/policies.md §Sticky
 * approvals and §Mixed batches).
 */
export interface ApprovalOptions {
  /**
   * Whether a `remember` given with the approval of a `risk: 'high'` call is recorded. Default
   * `false`: a high-risk call always asks, and `remember` on it is ignored, the
   * `approval_remembered` event listing it in `notRemembered` (reason `high_risk`).
   */
  rememberHighRisk?: boolean;
  /**
   * What the calls of a batch that need no approval do while other calls of the batch wait for
   * one: `wait` (default) for the approval with them; `parallel` run first, and the approval is
   * asked once they finished. A tool's own `approvals.runUnapproved` decides for its calls.
   */
  runUnapproved?: RunUnapproved;
}

/** The name remembered approvals decide under on `policy_decision` events. */
export const REMEMBERED_APPROVAL_POLICY = 'remembered-approval';

/** The approval facts of a call with whether a `remember` on it may be recorded (`rememberable`). */
export function withRememberable(
  facts: ApprovalFacts | undefined,
  options: ApprovalOptions | undefined,
): ApprovalFacts | undefined {
  if (facts?.risk !== 'high' || options?.rememberHighRisk === true) return facts;
  return { ...facts, rememberable: false };
}

/**
 * The remembered approval that lets a call needing approval run without asking, if any: the
 * newest one of the same tool with scope `tool`, or with scope `arguments` and the fingerprint
 * of this validated input. A call that may not be remembered (`rememberable: false`) has none.
 */
export function rememberedApprovalFor(
  approvals: readonly RememberedApproval[] | undefined,
  tool: string,
  input: Record<string, unknown>,
  facts: ApprovalFacts | undefined,
): RememberedApproval | undefined {
  if (approvals === undefined || approvals.length === 0 || facts?.rememberable === false) return undefined;
  let fingerprint: string | undefined;
  for (let index = approvals.length - 1; index >= 0; index--) {
    const approval = approvals[index]!;
    if (approval.tool !== tool) continue;
    if (approval.scope === 'tool') return approval;
    fingerprint ??= callFingerprint(tool, input);
    if (approval.fingerprint === fingerprint) return approval;
  }
  return undefined;
}

/** The `policy_decision` of a call admitted by a remembered approval: `approved_by: 'remembered'`. */
export function rememberedDecision(call: PendingCall, approval: RememberedApproval): PolicyDecisionRecord {
  return {
    policy: REMEMBERED_APPROVAL_POLICY,
    hook: 'onToolBatch',
    kinds: ['approve'],
    decision: {
      approved_by: 'remembered',
      approvalId: approval.id,
      scope: approval.scope,
      ...(approval.by === undefined ? {} : { by: approval.by }),
    },
    toolCallId: call.toolCallId,
    tool: call.name,
    ...(approval.fingerprint === undefined ? {} : { fingerprint: approval.fingerprint }),
  };
}

/**
 * The approvals a `confirm({ approved: true, remember })` records, one per held call (with its
 * edited input when approved with edits), and the held calls it does not cover: those whose
 * facts say `rememberable: false` (reason `high_risk`).
 */
export function approvalsToRemember(
  runId: string,
  confirmationId: string,
  held: readonly PendingCall[],
  answer: {
    remember: RememberScope;
    by?: string;
    edits?: readonly { toolCallId: string; preparedInput: Record<string, unknown> }[];
  },
  at: number,
): {
  remember: RememberedApproval[];
  notRemembered: { toolCallId: string; tool: string; reason: 'high_risk' }[];
} {
  const edited = new Map((answer.edits ?? []).map((edit) => [edit.toolCallId, edit.preparedInput]));
  const remember: RememberedApproval[] = [];
  const notRemembered: { toolCallId: string; tool: string; reason: 'high_risk' }[] = [];
  for (const call of held) {
    if (call.approval?.rememberable === false) {
      notRemembered.push({ toolCallId: call.toolCallId, tool: call.name, reason: 'high_risk' });
      continue;
    }
    const input = edited.get(call.toolCallId) ?? call.preparedInput ?? {};
    remember.push({
      id: `${confirmationId}/${call.toolCallId}`,
      scope: answer.remember,
      tool: call.name,
      ...(answer.remember === 'arguments' ? { fingerprint: callFingerprint(call.name, input), input } : {}),
      ...(answer.by === undefined ? {} : { by: answer.by }),
      at,
      runId,
      toolCallId: call.toolCallId,
    });
  }
  return { remember, notRemembered };
}
