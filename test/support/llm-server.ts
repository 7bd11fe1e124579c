/**
 * The real model server the model suites use (issue 11): llama-cpp-python with Gemma 3 270M,
 * started by `bash scripts/llm.sh install && bash scripts/llm.sh start` (and by `.ci/run`).
 * Suites skip with a message when it is absent on a developer's machine; under CI=true they are
 * required (and fail).
 */
export const LLM_URL = `http://127.0.0.1:${process.env.LLM_PORT || 8765}`;

/** Whether the server answers, whether the suite must run, and the skip message already printed. */
export async function probeLlmServer(suite: string): Promise<{ available: boolean; required: boolean }> {
  const available = await fetch(`${LLM_URL}/v1/models`, { signal: AbortSignal.timeout(2_000) })
    .then((response) => response.ok)
    .catch(() => false);
  const required = process.env.CI === 'true';
  if (!available && !required) {
    console.warn(
      `[skip] ${suite}: no model server at ${LLM_URL}. Start it with: bash scripts/llm.sh install && bash scripts/llm.sh start`,
    );
  }
  return { available, required };
}
