/**
 * Which version of the GenAI semantic conventions toolwarden emits (docs/telemetry.md §Conventions).
 *
 * The GenAI conventions are in Development and say how instrumentations move on
 * (semantic-conventions-genai, docs/gen-ai/gen-ai-agent-spans.md, the transition note): keep
 * emitting by default the version they emitted (toolwarden's is v1.36.0's agent spans), and emit the
 * latest experimental version instead, without the old one, when `OTEL_SEMCONV_STABILITY_OPT_IN` (a
 * comma-separated list) contains `gen_ai_latest_experimental`.
 *
 * | | default (v1.36.0) | `gen_ai_latest_experimental` |
 * |---|---|---|
 * | `gen_ai.agent.id` on `invoke_agent` | yes | no (`toolwarden.agent.id` in both) |
 * | `gen_ai.operation.name=plan`, `gen_ai.agent.name` on `plan` | no | yes |
 * | `gen_ai.usage.cache_read.*`, `cache_write.*`, `reasoning.*` on `chat` | no | yes |
 * | `gen_ai.execution.state.changed` events | no | yes |
 * | `gen_ai.invoke_agent.*`, `gen_ai.execute_tool.duration`, `gen_ai.client.inference.*` metrics | no | yes |
 *
 * toolwarden's own names (`toolwarden.*`), the MCP attributes (docs/gen-ai/mcp.md has no transition
 * note) and span links are the same in both.
 */

/** The environment variable of the transition plan. */
export const OTEL_SEMCONV_STABILITY_OPT_IN = 'OTEL_SEMCONV_STABILITY_OPT_IN';
/** Its value for the latest experimental GenAI conventions. */
export const GEN_AI_LATEST_EXPERIMENTAL = 'gen_ai_latest_experimental';

/** True when `OTEL_SEMCONV_STABILITY_OPT_IN` (comma-separated, spaces ignored) lists `gen_ai_latest_experimental`. */
export function genAiLatestExperimental(
  env: Record<string, string | undefined> | undefined = globalThis.process?.env,
): boolean {
  const value = env?.[OTEL_SEMCONV_STABILITY_OPT_IN];
  if (!value) return false;
  return value.split(',').some((item) => item.trim() === GEN_AI_LATEST_EXPERIMENTAL);
}
