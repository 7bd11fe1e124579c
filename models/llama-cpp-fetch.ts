/**
 * A `fetch` for `createOpenAICompatible({ fetch })` in front of llama-cpp-python's server
 * (`python -m llama_cpp.server`, 0.3.x; docs/planners.md §Models). The AI SDK's OpenAI-compatible
 * provider sends an assistant turn that only calls tools with `content: null`, as OpenAI's API
 * allows; llama-cpp-python's request model requires a string there and answers HTTP 500 (seven
 * validation errors), so every turn after a tool call failed. This sends `""` instead.
 * Everything else passes through unchanged.
 */
export const llamaCppFetch: typeof fetch = async (input, init) => {
  if (typeof init?.body !== 'string' || !init.body.includes('"content":null')) return fetch(input, init);
  let body: { messages?: { role?: string; content?: unknown }[] };
  try {
    body = JSON.parse(init.body);
  } catch {
    return fetch(input, init);
  }
  for (const message of body.messages ?? []) {
    if (message.role === 'assistant' && message.content === null) message.content = '';
  }
  return fetch(input, { ...init, body: JSON.stringify(body) });
};
