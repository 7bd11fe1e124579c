import type {
  APICallError,
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3FunctionTool,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamResult,
  SharedV3ProviderOptions,
} from '@ai-sdk/provider';
import type { TracerProvider } from '@opentelemetry/api';
import { z } from 'zod';
import { SpanKind, SpanStatusCode, trace } from '../plugins/otel-api.ts';
import type { PlanInput, Planner, PlannerModel, PlanResult, PlanResumeInput } from '../run/planner.ts';
import { inferenceUsageAttributes, recordInference } from '../telemetry/inference.ts';
import type { JSONSchema } from '../tools/define-tool.ts';
import { type AnyLanguageModel, asLanguageModelV3 } from './language-model.ts';
import { toModelPrompt } from './model-prompt.ts';
import { modelToolSchema } from './model-tool-schema.ts';
import type { HintStyle } from './render-hint.ts';
import { collectStream, type StreamDelta } from './stream-result.ts';
import { withKnownUsage } from './token-usage.ts';
import { toolNameMap } from './tool-names.ts';

export interface ModelPlannerOptions {
  /**
   * Any AI SDK language model: provider spec V4 (AI SDK 7 providers: OpenAI, Anthropic, an
   * OpenAI-compatible server, …), V3 (AI SDK 6 providers) or V2 (AI SDK 5 providers). V4 and V2
   * answers are read as V3 answers (`language-model.ts`: `model-v4.ts`, `model-v2.ts`).
   */
  model: AnyLanguageModel;
  /** System instructions, sent before the transcript. */
  system?: string;
  temperature?: number;
  maxOutputTokens?: number;
  /** How a failed call reads to the model (`render-hint.ts`). Default `structured`. */
  hints?: HintStyle;
  providerOptions?: SharedV3ProviderOptions;
  /** Retries of a 429, a 5xx or a network error, with backoff honouring `Retry-After`. Default 2. */
  maxRetries?: number;
  /** Longest wait between retries, ms. Default 10 000. */
  maxRetryDelayMs?: number;
  /**
   * Where the `chat` span of each model call goes (OTel GenAI conventions: `chat {model}`, kind
   * CLIENT, request/response model, token usage, finish reasons). Default: the global provider,
   * a no-op until the app registers an SDK. The span is a child of the active span (the run's
   * `plan` span when the telemetry plugin is on).
   */
  tracerProvider?: TracerProvider;
  /**
   * Offers the model a built-in tool `ask_user({ question, missingFields? })` on turns with tools.
   * A call of it becomes `await.clarification` (id: the model's call id): the run waits in
   * `awaiting.clarification`, the question is the assistant's message and the answer comes back
   * as the user's (`run.provideClarification`). Other calls in the same answer wait: the model
   * asks first. Default false.
   */
  askUser?: boolean;
  /**
   * Call the model with `doStream` and report what it writes as it writes it: each text delta and
   * each fragment of a tool call's input JSON reaches `PlanInput.onDelta`, which the runtime
   * publishes on `run.events$` as `text_delta` / `tool_call_delta` (with the tool's id), for UIs.
   * The turn's result is the same as without streaming. Default false.
   */
  stream?: boolean;
  /**
   * The shape of the run's final answer, a zod schema. The model is told to answer with JSON
   * matching its JSON Schema; a final text is parsed and validated, and `finalResponse.data` is
   * the validated value (`text` the model's JSON). A text that is not JSON or does not match is
   * repaired like a bad tool call: the model gets its answer back with what was wrong (the
   * schema's issues, the first 20) and answers again, with `responseFormat` JSON and no tools, at
   * most `caps.maxRetriesPerTool` times in the turn; then the turn fails with a
   * {@link ModelPlannerError} holding the last answer.
   */
  output?: z.ZodType;
}

/** The options with the model as V3. */
type ResolvedOptions = Omit<ModelPlannerOptions, 'model'> & { model: LanguageModelV3 };

/** The built-in tool `askUser` adds; a tool id has a dot, so no tool of the run maps to it. */
export const ASK_USER_TOOL = 'ask_user';

const AskUserInput = z.object({
  question: z.string().min(1),
  missingFields: z.array(z.string()).optional(),
});

const askUserTool: LanguageModelV3FunctionTool = {
  type: 'function',
  name: ASK_USER_TOOL,
  description:
    'Ask the user a question when the request lacks information a tool needs. Name the missing fields. The run waits for the answer.',
  inputSchema: {
    type: 'object',
    properties: {
      question: { type: 'string', description: 'The question for the user' },
      missingFields: {
        type: 'array',
        items: { type: 'string' },
        description: 'The fields the answer should give',
      },
    },
    required: ['question'],
    additionalProperties: false,
  },
};

/**
 * Thrown when the model cannot plan the turn: its answer had neither text nor tool calls (the
 * raw answer in `content`), or the provider kept failing (`cause`: the AI SDK's APICallError,
 * with the provider, HTTP status and request id in the message). The run fails with it.
 */
export class ModelPlannerError extends Error {
  override readonly name = 'ModelPlannerError';
  readonly content?: unknown;
  constructor(message: string, options: { cause?: unknown; content?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.content = options.content;
  }
}

/**
 * A planner backed by a language model (docs/planners.md). Each turn calls the model through the
 * provider interface (`doGenerate`), not `generateText`: the AI SDK would validate tool inputs
 * itself, and the model's tool-call JSON text must reach the tool boundary as it was written, so
 * a bad call comes back with a RetryHint the model can act on.
 *
 * | run turn                          | model call                                                   |
 * |-----------------------------------|--------------------------------------------------------------|
 * | tools advertised                  | function tools (JSON Schema), names made provider-safe (`tool-names.ts`) |
 * | restricted to one tool after a hint | only that tool, `toolChoice` naming it                     |
 * | finalizing (`tools: []`)          | no tools                                                     |
 * | answer with tool calls            | `toolCalls` (ids kept as the model's), its text a planner note |
 * | answer with text only             | `finalResponse` (with `output`: validated JSON in `data`, repaired by the model) |
 * | a call of `ask_user` (`askUser`)  | `await.clarification`: the run waits for a person            |
 * | neither                           | {@link ModelPlannerError} with the raw answer                |
 *
 * The planner's `signal` aborts the HTTP request. Each model call is a `chat` span with its
 * token usage (OTel GenAI conventions); the turn's usage is in `PlanResult.usage`, summed on
 * the run (`outcome.usage`) and held to `caps.maxTotalTokens`. `askUser` offers a built-in
 * `ask_user` tool whose call makes the run wait for a person; `output` validates the final
 * answer against a zod schema and has the model repair it; `stream` calls `doStream` and reports
 * the model's text and tool-input deltas as it writes them (`PlanInput.onDelta`).
 */
export function modelPlanner(given: ModelPlannerOptions): Planner {
  const options: ResolvedOptions = { ...given, model: asLanguageModelV3(given.model) };
  const outputSchema = options.output
    ? modelToolSchema(z.toJSONSchema(options.output) as JSONSchema)
    : undefined;
  const turn = async (input: PlanInput | PlanResumeInput): Promise<PlanResult> => {
    const ids = new Set(input.tools.map((tool) => tool.name));
    for (const message of input.messages) {
      if (message.role === 'tool') ids.add(message.toolName);
      if (message.role === 'assistant') for (const call of message.toolCalls ?? []) ids.add(call.toolName);
    }
    const names = toolNameMap(ids);
    const tools: LanguageModelV3FunctionTool[] = input.tools.map((tool) => ({
      type: 'function',
      name: names.toProvider(tool.name),
      description: tool.description,
      inputSchema: modelToolSchema(tool.inputSchema) as LanguageModelV3FunctionTool['inputSchema'],
    }));
    if (options.askUser && tools.length > 0 && !restricted(input)) tools.push(askUserTool);
    const system = [options.system, outputSchema && outputInstruction(outputSchema)]
      .filter(Boolean)
      .join('\n\n');
    const call: LanguageModelV3CallOptions = {
      prompt: toModelPrompt(input.messages, {
        ...(system ? { system } : {}),
        hints: options.hints ?? 'structured',
        providerName: names.toProvider,
        // The finalizing turn's last message: answer now, why, what was not done.
        ...('finalize' in input && input.finalize ? { finalize: input.finalize, caps: input.caps } : {}),
      }),
      ...(tools.length > 0
        ? {
            tools,
            // The one tool by name rather than `required`: the same with one tool, and servers
            // that know no `required` (llama-cpp-python's chatml-function-calling asserts `auto`
            // or a named function) accept it.
            toolChoice: restricted(input) ? { type: 'tool', toolName: tools[0]!.name } : { type: 'auto' },
          }
        : {}),
      ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
      ...(options.maxOutputTokens === undefined ? {} : { maxOutputTokens: options.maxOutputTokens }),
      ...(options.providerOptions === undefined ? {} : { providerOptions: options.providerOptions }),
      ...(input.signal === undefined ? {} : { abortSignal: input.signal }),
    };
    const onDelta = input.onDelta;
    const result = await tracedGenerate(
      options,
      call,
      input.signal,
      onDelta &&
        ((delta) =>
          onDelta(
            delta.type === 'text'
              ? { type: 'text_delta', delta: delta.delta }
              : {
                  type: 'tool_call_delta',
                  toolCallId: delta.toolCallId,
                  tool: names.fromProvider(delta.toolName),
                  delta: delta.delta,
                },
          )),
    );
    const plan = planFrom(result, names.fromProvider);
    if (!options.output || !plan.finalResponse) return plan;
    return structuredFinal(options, outputSchema, call, plan, input);
  };
  const model: PlannerModel = {
    provider: options.model.provider,
    modelId: options.model.modelId,
    ...(options.maxOutputTokens === undefined ? {} : { maxOutputTokens: options.maxOutputTokens }),
  };
  return { planStart: turn, planResume: turn, model };
}

/** The system text that asks for the final answer as JSON of the output schema. */
function outputInstruction(schema: unknown): string {
  return `When you give your final answer (not a tool call), answer only with JSON matching this JSON Schema, nothing else:\n${JSON.stringify(schema)}`;
}

/** The first JSON value of a text: the whole text, or a fenced ```json block in it. */
function jsonOf(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text);
  try {
    return { ok: true, value: JSON.parse(fenced ? fenced[1]! : text) };
  } catch (err) {
    return { ok: false, error: `not JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** What was wrong with a final answer, for the model: zod's issues (at most 20) or the parse error. */
function outputProblems(schema: z.ZodType, text: string): { data?: unknown; problems?: string } {
  const json = jsonOf(text);
  if (!json.ok) return { problems: json.error };
  const parsed = schema.safeParse(json.value);
  if (parsed.success) return { data: parsed.data };
  const issues = parsed.error.issues.slice(0, 20).map((issue) => {
    const at = issue.path.length > 0 ? issue.path.join('.') : '(root)';
    return `${at}: ${issue.message}`.slice(0, 300);
  });
  const more = parsed.error.issues.length - issues.length;
  return { problems: [...issues, ...(more > 0 ? [`(${more} more issues)`] : [])].join('; ') };
}

/**
 * Validates a final answer against `options.output`; repairs it with the model when it fails
 * (the turn's tokens summed), at most `caps.maxRetriesPerTool` times.
 * @throws ModelPlannerError when the last answer still does not match.
 */
async function structuredFinal(
  options: ResolvedOptions,
  jsonSchema: unknown,
  call: LanguageModelV3CallOptions,
  plan: PlanResult,
  input: PlanInput | PlanResumeInput,
): Promise<PlanResult> {
  const schema = options.output!;
  let text = plan.finalResponse!.text;
  const usage = { ...(plan.usage ?? { inputTokens: 0, outputTokens: 0 }) };
  const prompt = [...call.prompt];
  for (let attempt = 0; ; attempt++) {
    const checked = outputProblems(schema, text);
    if (checked.problems === undefined) {
      return { ...plan, finalResponse: { text, data: checked.data }, usage };
    }
    if (attempt >= input.caps.maxRetriesPerTool) {
      throw new ModelPlannerError(
        `The model's final answer does not match the output schema after ${attempt + 1} attempts: ${checked.problems}`,
        { content: text },
      );
    }
    prompt.push(
      { role: 'assistant', content: [{ type: 'text', text }] },
      {
        role: 'user',
        content: [
          {
            type: 'text',
            text: `Your answer does not match the required JSON Schema (${checked.problems}). Answer again with only the corrected JSON.`,
          },
        ],
      },
    );
    const { tools: _tools, toolChoice: _choice, ...rest } = call;
    const result = await tracedGenerate(
      options,
      {
        ...rest,
        prompt: [...prompt],
        responseFormat: { type: 'json', schema: jsonSchema as never },
      },
      input.signal,
    );
    usage.inputTokens += result.usage?.inputTokens?.total ?? 0;
    usage.outputTokens += result.usage?.outputTokens?.total ?? 0;
    const cached = result.usage?.inputTokens?.cacheRead;
    if (typeof cached === 'number' && cached > 0)
      usage.cachedInputTokens = (usage.cachedInputTokens ?? 0) + cached;
    text = result.content
      .flatMap((part) => (part.type === 'text' ? [part.text] : []))
      .join('\n')
      .trim();
  }
}

/** A turn after a hint that restricted the run to one tool: the model must call it. */
function restricted(input: PlanInput | PlanResumeInput): boolean {
  if (input.tools.length !== 1 || !('toolResults' in input)) return false;
  return input.toolResults.some((result) => result.retryHint?.restrictToTool === true);
}

function planFrom(result: LanguageModelV3GenerateResult, toId: (name: string) => string): PlanResult {
  const toolCalls: NonNullable<PlanResult['toolCalls']> = [];
  const texts: string[] = [];
  let question: { toolCallId: string; input: string } | undefined;
  for (const part of result.content) {
    if (part.type === 'tool-call' && part.toolName === ASK_USER_TOOL && question === undefined) {
      question = { toolCallId: part.toolCallId, input: part.input };
    } else if (part.type === 'tool-call') {
      // The model's JSON text, untouched: the tool boundary parses and checks it.
      toolCalls.push({ name: toId(part.toolName), toolCallId: part.toolCallId, input: part.input });
    } else if (part.type === 'text' && part.text.trim() !== '') {
      texts.push(part.text);
    }
  }
  const text = texts.join('\n').trim();
  const cached = result.usage?.inputTokens?.cacheRead;
  const usage = {
    usage: {
      inputTokens: result.usage?.inputTokens?.total ?? 0,
      outputTokens: result.usage?.outputTokens?.total ?? 0,
      ...(typeof cached === 'number' && cached > 0 ? { cachedInputTokens: cached } : {}),
    },
  };
  if (question) {
    const asked = askUserInput(question.input, text);
    return {
      await: { clarification: { id: question.toolCallId, ...asked } },
      ...(text ? { notes: [text] } : {}),
      ...usage,
    };
  }
  if (toolCalls.length > 0) return text ? { toolCalls, notes: [text], ...usage } : { toolCalls, ...usage };
  if (text) return { finalResponse: { text }, ...usage };
  throw new ModelPlannerError(
    `The model answered with neither text nor tool calls (finish reason ${String(result.finishReason?.unified ?? result.finishReason)})`,
    { content: result.content },
  );
}

/**
 * The question of an `ask_user` call. A call whose input is not `{ question, missingFields? }`
 * asks the answer's text instead, or, with none, says so: a malformed question still reaches the
 * user rather than failing the run.
 */
function askUserInput(raw: string, text: string): { question: string; missingFields: string[] } {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    value = undefined;
  }
  const parsed = AskUserInput.safeParse(value);
  if (parsed.success)
    return { question: parsed.data.question, missingFields: parsed.data.missingFields ?? [] };
  return {
    question:
      text || `The assistant needs more information (its question was unreadable: ${raw.slice(0, 200)})`,
    missingFields: [],
  };
}

/**
 * One model call in a `chat` span, as the OTel GenAI semantic conventions name it (the retries
 * of that call inside it): `gen_ai.operation.name=chat`, `gen_ai.provider.name`,
 * `gen_ai.request.model`, `gen_ai.request.temperature`, `gen_ai.request.max_tokens`,
 * `gen_ai.response.model`, `gen_ai.response.id`, `gen_ai.response.finish_reasons`,
 * `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens`; on failure ERROR and `error.type`.
 */
async function tracedGenerate(
  options: ResolvedOptions,
  call: LanguageModelV3CallOptions,
  signal: AbortSignal | undefined,
  onDelta?: (delta: StreamDelta) => void,
): Promise<LanguageModelV3GenerateResult> {
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer('toolwarden');
  const { model } = options;
  const started = performance.now();
  const inference = { operation: 'chat', provider: model.provider, requestModel: model.modelId };
  return tracer.startActiveSpan(`chat ${model.modelId}`, { kind: SpanKind.CLIENT }, async (span) => {
    if (span.isRecording()) {
      span.setAttributes({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': model.provider,
        'gen_ai.request.model': model.modelId,
        ...(options.temperature === undefined ? {} : { 'gen_ai.request.temperature': options.temperature }),
        ...(options.maxOutputTokens === undefined
          ? {}
          : { 'gen_ai.request.max_tokens': options.maxOutputTokens }),
      });
    }
    try {
      const answer = options.stream
        ? await collectStream(await streamWithRetries(options, call, signal), onDelta ?? (() => {}), {
            signal,
          }).catch((err: unknown) => {
            throw signal?.aborted ? (signal.reason ?? err) : providerError(options.model, err, 1);
          })
        : await generateWithRetries(options, call, signal);
      // A count that is not a number of tokens (NaN, -1) is unknown, not a failed run.
      const result = withKnownUsage(answer);
      const { usage, response, finishReason } = result;
      // Token counts as the GenAI conventions name them (telemetry/inference.ts: the cache and
      // reasoning breakdown only with OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental).
      const tokens = {
        inputTokens: usage?.inputTokens?.total,
        outputTokens: usage?.outputTokens?.total,
        cacheReadInputTokens: usage?.inputTokens?.cacheRead,
        cacheWriteInputTokens: usage?.inputTokens?.cacheWrite,
        reasoningOutputTokens: usage?.outputTokens?.reasoning,
      };
      if (span.isRecording()) {
        span.setAttributes({
          'gen_ai.response.model': response?.modelId ?? model.modelId,
          ...(response?.id === undefined ? {} : { 'gen_ai.response.id': response.id }),
          'gen_ai.response.finish_reasons': [String(finishReason?.unified ?? finishReason)],
          ...inferenceUsageAttributes(tokens),
        });
      }
      recordInference({
        ...inference,
        responseModel: response?.modelId ?? model.modelId,
        durationS: (performance.now() - started) / 1000,
        usage: tokens,
      });
      return result;
    } catch (err) {
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: err instanceof Error ? err.message : String(err),
      });
      span.setAttribute('error.type', err instanceof Error ? err.name : '_OTHER');
      recordInference({
        ...inference,
        durationS: (performance.now() - started) / 1000,
        errorType: err instanceof Error ? err.name : '_OTHER',
      });
      throw err;
    } finally {
      span.end();
    }
  });
}

function generateWithRetries(
  options: ResolvedOptions,
  call: LanguageModelV3CallOptions,
  signal: AbortSignal | undefined,
): Promise<LanguageModelV3GenerateResult> {
  return withRetries(options, signal, () => options.model.doGenerate(call));
}

/** Starts a stream, retried as a `doGenerate` is; a stream that fails once started is not retried (its deltas are out). */
function streamWithRetries(
  options: ResolvedOptions,
  call: LanguageModelV3CallOptions,
  signal: AbortSignal | undefined,
): Promise<LanguageModelV3StreamResult> {
  return withRetries(options, signal, () => options.model.doStream(call));
}

async function withRetries<T>(
  options: ResolvedOptions,
  signal: AbortSignal | undefined,
  request: () => PromiseLike<T>,
): Promise<T> {
  const maxRetries = options.maxRetries ?? 2;
  for (let attempt = 0; ; attempt++) {
    try {
      return await request();
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err;
      const retryable = isApiCallError(err) ? err.isRetryable : isNetworkError(err);
      if (!retryable || attempt >= maxRetries) throw providerError(options.model, err, attempt + 1);
      await sleep(retryDelay(err, attempt, options.maxRetryDelayMs ?? 10_000), signal);
    }
  }
}

function providerError(model: LanguageModelV3, err: unknown, attempts: number): ModelPlannerError {
  const api = isApiCallError(err) ? err : undefined;
  const requestId = api?.responseHeaders?.['x-request-id'] ?? api?.responseHeaders?.['request-id'];
  const parts = [
    `${model.provider} model ${model.modelId} failed after ${attempts} attempt${attempts === 1 ? '' : 's'}`,
    api?.statusCode === undefined ? undefined : `HTTP ${api.statusCode}`,
    requestId === undefined ? undefined : `request id ${requestId}`,
  ].filter(Boolean);
  return new ModelPlannerError(`${parts.join(', ')}: ${err instanceof Error ? err.message : String(err)}`, {
    cause: err,
  });
}

function isNetworkError(err: unknown): boolean {
  const code =
    (err as { code?: unknown; cause?: { code?: unknown } })?.cause?.code ?? (err as { code?: unknown })?.code;
  return typeof code === 'string' && /^(ECONNRESET|ECONNREFUSED|ETIMEDOUT|EPIPE|UND_ERR_)/.test(code);
}

/** `Retry-After` (seconds or a date) when the provider sent it, else 500 ms doubling; capped. */
function retryDelay(err: unknown, attempt: number, maxMs: number): number {
  const header = isApiCallError(err) ? err.responseHeaders?.['retry-after'] : undefined;
  let ms = 500 * 2 ** attempt;
  if (header !== undefined) {
    const seconds = Number(header);
    ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
  }
  return Math.min(Math.max(0, ms), maxMs);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

/**
 * `APICallError.isInstance` without a value import of `@ai-sdk/provider` (the AI SDK's marker
 * symbol), so `toolwarden/models` can be imported to say that package is missing (run/optional-peers.ts).
 */
function isApiCallError(err: unknown): err is APICallError {
  const marker = Symbol.for('vercel.ai.error.AI_APICallError');
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[marker] === true;
}
