import * as stable from '@opentelemetry/semantic-conventions';
import * as incubating from '@opentelemetry/semantic-conventions/incubating';
import { describe, expect, it } from 'vitest';
import * as names from '../telemetry/attributes.ts';

// These are wire names users query in Jaeger and build dashboards on: a semconv upgrade that
// renames an incubating GenAI attribute must fail here, not silently change our spans.
describe('telemetry names (docs/telemetry.md)', () => {
  it('uses the OpenTelemetry GenAI names for operation, agent, conversation and tool attributes', () => {
    expect({
      operation: names.ATTR_GEN_AI_OPERATION_NAME,
      agentId: names.ATTR_GEN_AI_AGENT_ID,
      agentName: names.ATTR_GEN_AI_AGENT_NAME,
      conversationId: names.ATTR_GEN_AI_CONVERSATION_ID,
      toolName: names.ATTR_GEN_AI_TOOL_NAME,
      toolCallId: names.ATTR_GEN_AI_TOOL_CALL_ID,
      toolType: names.ATTR_GEN_AI_TOOL_TYPE,
      toolDescription: names.ATTR_GEN_AI_TOOL_DESCRIPTION,
      arguments: names.ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
      result: names.ATTR_GEN_AI_TOOL_CALL_RESULT,
      errorType: names.ATTR_ERROR_TYPE,
    }).toEqual({
      operation: 'gen_ai.operation.name',
      agentId: 'gen_ai.agent.id',
      agentName: 'gen_ai.agent.name',
      conversationId: 'gen_ai.conversation.id',
      toolName: 'gen_ai.tool.name',
      toolCallId: 'gen_ai.tool.call.id',
      toolType: 'gen_ai.tool.type',
      toolDescription: 'gen_ai.tool.description',
      arguments: 'gen_ai.tool.call.arguments',
      result: 'gen_ai.tool.call.result',
      errorType: 'error.type',
    });
    expect(names.GEN_AI_TOOL_TYPE_VALUE_FUNCTION).toBe('function');
  });

  it('writes out the same GenAI names the installed semantic-conventions package defines', () => {
    const conventions: Record<string, unknown> = { ...incubating, ATTR_ERROR_TYPE: stable.ATTR_ERROR_TYPE };
    const ours: Record<string, unknown> = names;
    const written = Object.keys(ours).filter((key) => key.includes('GEN_AI') || key === 'ATTR_ERROR_TYPE');
    expect(written.length).toBeGreaterThan(10);
    for (const key of written) expect([key, ours[key]]).toEqual([key, conventions[key] ?? ours[key]]);
    // Newer than the package (1.45): semantic-conventions-genai's execution state event
    // (docs/gen-ai/gen-ai-execution.md), the cache_write rename (changelog.d/440.breaking.md),
    // gen_ai.token.modality (PR #374) and the plan operation (PR #97).
    expect(written.filter((key) => conventions[key] === undefined).sort()).toEqual([
      'ATTR_GEN_AI_EXECUTION_STATE_CHANGED_KEY_COUNT',
      'ATTR_GEN_AI_EXECUTION_STATE_VERSION',
      'ATTR_GEN_AI_TOKEN_MODALITY',
      'ATTR_GEN_AI_USAGE_CACHE_WRITE_INPUT_TOKENS',
      'EVENT_GEN_AI_EXECUTION_STATE_CHANGED',
      'GEN_AI_OPERATION_NAME_VALUE_PLAN',
      'GEN_AI_TOOL_TYPE_VALUE_FUNCTION',
    ]);
  });

  it('names spans `invoke_agent {agent}`, `plan {agent}` and `execute_tool {tool}`', () => {
    expect(names.invokeAgentSpanName('Support agent')).toBe('invoke_agent Support agent');
    expect(names.planSpanName('Support agent')).toBe('plan Support agent');
    expect(names.executeToolSpanName('crm.upsert_profile')).toBe('execute_tool crm.upsert_profile');
    expect(names.GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT).toBe('invoke_agent');
    expect(names.GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL).toBe('execute_tool');
  });

  it('puts ToolCallMeta and run state under toolwarden.* as docs/telemetry.md spells them', () => {
    expect([
      names.ATTR_TOOLWARDEN_RUN_ID,
      names.ATTR_TOOLWARDEN_RUN_STATUS,
      names.ATTR_TOOLWARDEN_SESSION_ID,
      names.ATTR_TOOLWARDEN_TURN_ID,
      names.ATTR_TOOLWARDEN_PLAN_KIND,
      names.ATTR_TOOLWARDEN_TOOL_CALL_ID,
      names.ATTR_TOOLWARDEN_TOOL_CALL_PARENT_ID,
      names.ATTR_TOOLWARDEN_TOOL_CALL_ATTEMPT,
      names.ATTR_TOOLWARDEN_TOOL_CALL_EXECUTED,
      names.EVENT_TOOLWARDEN_RETRY_HINT,
      names.EVENT_TOOLWARDEN_POLICY_DECISION,
    ]).toEqual([
      'toolwarden.run.id',
      'toolwarden.run.status',
      'toolwarden.session.id',
      'toolwarden.turn.id',
      'toolwarden.plan.kind',
      'toolwarden.tool_call.id',
      'toolwarden.tool_call.parent_id',
      'toolwarden.tool_call.attempt',
      'toolwarden.tool_call.executed',
      'toolwarden.retry_hint',
      'toolwarden.policy_decision',
    ]);
  });

  it('names the span-event and run-end details the telemetry plugin adds under toolwarden.*', () => {
    expect([
      names.ATTR_TOOLWARDEN_PLAN_RESULT_KIND,
      names.ATTR_TOOLWARDEN_RUN_AWAITING,
      names.ATTR_TOOLWARDEN_RUN_FINALIZE_REASON,
      names.ATTR_TOOLWARDEN_TOOL_CALL_OUTCOME,
      names.ATTR_TOOLWARDEN_RETRY_HINT_REASON,
      names.ATTR_TOOLWARDEN_RETRY_HINT_MISSING_FIELDS,
      names.ATTR_TOOLWARDEN_RETRY_HINT_RESTRICT_TO_TOOL,
      names.ATTR_TOOLWARDEN_RETRY_HINT_MESSAGE,
      names.ATTR_TOOLWARDEN_RETRY_HINT_RETRY_AFTER_MS,
      names.ATTR_TOOLWARDEN_POLICY_NAME,
      names.ATTR_TOOLWARDEN_POLICY_HOOK,
      names.ATTR_TOOLWARDEN_POLICY_DECISION_KIND,
      names.ATTR_TOOLWARDEN_POLICY_DECISION_DETAIL,
      names.ATTR_TOOLWARDEN_POLICY_NOTE,
      names.ATTR_TOOLWARDEN_RESUME_RESTORED,
      names.ATTR_TOOLWARDEN_RESUME_STATE,
    ]).toEqual([
      'toolwarden.plan.result_kind',
      'toolwarden.run.awaiting',
      'toolwarden.run.finalize_reason',
      'toolwarden.tool_call.outcome',
      'toolwarden.retry_hint.reason',
      'toolwarden.retry_hint.missing_fields',
      'toolwarden.retry_hint.restrict_to_tool',
      'toolwarden.retry_hint.message',
      'toolwarden.retry_hint.retry_after_ms',
      'toolwarden.policy.name',
      'toolwarden.policy.hook',
      'toolwarden.policy.decision.kind',
      'toolwarden.policy.decision.detail',
      'toolwarden.policy.note',
      'toolwarden.resume.restored',
      'toolwarden.resume.state',
    ]);
  });

  it('describes the six metrics of docs/telemetry.md with their instrument and unit (durations in seconds)', () => {
    const summary = Object.values(names.TOOLWARDEN_METRICS).map((m) => `${m.name} ${m.instrument} ${m.unit}`);
    expect(summary).toEqual([
      'toolwarden.tool.calls counter {call}',
      'toolwarden.tool.duration histogram s',
      'toolwarden.retry_hints counter {hint}',
      'toolwarden.policy.decisions counter {decision}',
      'toolwarden.runs counter {run}',
      'toolwarden.runs.active updowncounter {run}',
    ]);
  });
});
