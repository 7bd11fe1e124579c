import type { Tool } from '../../tools/index.ts';

/**
 * A BFCL function as a tool the eval can run. BFCL functions are not callable services (there
 * is no `get_current_weather` behind the docs), so `execute` returns what it was given: the
 * input after the tool boundary validated it against the mapped doc (zod defaults filled in).
 * The eval reads these echoes to check the calls against the ground truth.
 */
export interface Echo {
  tool: string;
  arguments: Record<string, unknown>;
}

export function echoTool(tool: Tool, timeoutMs: number): Tool {
  return {
    ...tool,
    timeoutMs,
    execute: async (input: unknown): Promise<Echo> => ({
      tool: tool.id,
      arguments: input as Record<string, unknown>,
    }),
  };
}

/** The echo in a tool result, or undefined when the result is not one. */
export function echoOf(result: unknown): Echo | undefined {
  const echo = result as Partial<Echo> | null | undefined;
  return typeof echo?.tool === 'string' && echo.arguments !== null && typeof echo.arguments === 'object'
    ? (echo as Echo)
    : undefined;
}
