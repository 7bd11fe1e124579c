import type { ToolCallMeta } from '../tools/tool-call-meta.ts';
import type { ToolResult } from '../tools/tool-result.ts';
import { definePlugin, type Plugin, type ToolInvocation } from './define-plugin.ts';

/**
 * Where an injected field's value comes from: the call's {@link ToolCallMeta}, the run's labels,
 * or anything else the call carries. `undefined` leaves the field unset (a required field then
 * fails the call: "Injected fields … were not filled by a plugin").
 */
export type InjectedFieldSource = (
  meta: ToolCallMeta,
  labels: Readonly<Record<string, string>>,
  call: ToolInvocation,
) => unknown;

/** A field from the call's {@link ToolCallMeta}: `fromMeta('sessionId')`. */
export function fromMeta(key: keyof ToolCallMeta): InjectedFieldSource {
  return (meta) => meta[key];
}

/** A field from the run's labels: `fromLabel('tenant')`. */
export function fromLabel(name: string): InjectedFieldSource {
  return (_meta, labels) => (Object.hasOwn(labels, name) ? labels[name] : undefined);
}

/** What {@link injectFields} records on each result's `telemetry.injection`. */
export interface InjectionNote {
  /** Injected fields this plugin filled. */
  filled: string[];
  /** Injected fields the model tried to set; the boundary dropped its values before this plugin ran. */
  dropped: string[];
}

/**
 * Fills the tool's injected fields (docs/tool-boundary.md, Goa-AI "injected fields", docs/sources.md §Injected fields) from trusted sources, in
 * `wrapToolCall`. A tool declares `inject: ['session_id']`; the field is absent from the
 * model-facing JSON Schema, a value the model sends anyway is dropped at the tool boundary, and
 * this plugin sets it from `sources` just before `execute`. So a model can never set it.
 *
 * Each result gets `telemetry.injection` ({@link InjectionNote}): the fields filled and those the
 * model tried to set, visible on `tool_result` events and spans.
 *
 * ```ts
 * const runtime = createRuntime({
 *   ...,
 *   plugins: [injectFields({ session_id: fromMeta('sessionId'), tenant_id: fromLabel('tenant') })],
 * });
 * ```
 *
 * Only the tool's declared `inject` fields are ever written; a source for another field is unused.
 */
export function injectFields(
  sources: Record<string, InjectedFieldSource>,
  options: { name?: string } = {},
): Plugin {
  return definePlugin({
    name: options.name ?? 'inject-fields',
    async wrapToolCall(call, next) {
      const fields = call.tool.inject ?? [];
      if (fields.length === 0 && call.droppedFields.length === 0) return next(call);
      const input = { ...call.input };
      const filled: string[] = [];
      for (const field of fields) {
        const source = Object.hasOwn(sources, field) ? sources[field] : undefined;
        if (!source) continue;
        const value = source(call.meta, call.labels, call);
        if (value === undefined) continue;
        input[field] = value;
        filled.push(field);
      }
      const result: ToolResult = await next({ ...call, input });
      const injection: InjectionNote = { filled, dropped: [...call.droppedFields] };
      return { ...result, telemetry: { durationMs: 0, ...result.telemetry, injection } };
    },
  });
}
