import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { prepareToolCall } from './call-tool.ts';
import {
  BASE_VALIDATION_STEPS,
  parseWithinBudget,
  STEP_BUDGET_ISSUE,
  withStepBudget,
} from './json-schema-step-budget.ts';
import { toolFromJsonSchema } from './json-schema-tool.ts';
import { ToolCatalog } from './tool-catalog.ts';

/**
 * The schema of issue 39 item 5: `levels` definitions, each an `anyOf` of three references to
 * the one below, the bottom a string. ~1.3 KB at 18 levels; a wrong-typed value makes zod try
 * 3^levels branches (12 s at 18 levels, unanswered after 240 s at 25, before the budget).
 */
function anyOfChain(levels: number): Record<string, unknown> {
  const $defs: Record<string, unknown> = { l0: { type: 'string' } };
  for (let i = 1; i <= levels; i++) {
    const below = { $ref: `#/$defs/l${i - 1}` };
    $defs[`l${i}`] = { anyOf: [below, below, below] };
  }
  return { type: 'object', properties: { root: { $ref: `#/$defs/l${levels}` } }, required: ['root'], $defs };
}

function prepare(tool: ReturnType<typeof toolFromJsonSchema>, input: unknown) {
  return prepareToolCall(new ToolCatalog([tool]), { name: tool.id, toolCallId: 'call-1', input });
}

describe('validation of an outside schema is bounded in steps', () => {
  for (const levels of [18, 25]) {
    it(`an anyOf chain of ${levels} levels refuses a wrong-typed argument within the budget, saying the schema is too complex`, () => {
      const tool = toolFromJsonSchema({ name: 'srv.chain', parameters: anyOfChain(levels) });
      const { parsed, budget } = parseWithinBudget(tool.modelInput, { root: 42 });
      expect(parsed.success).toBe(false);
      expect(budget.exhausted).toBe(true);
      expect(budget.steps).toBe(budget.limit + 1);
      expect(budget.limit).toBeLessThan(BASE_VALIDATION_STEPS + 1_000);

      const prepared = prepare(tool, { root: 42 });
      expect(prepared.ok).toBe(false);
      const hint = prepared.ok ? undefined : prepared.result.retryHint;
      expect(hint?.reason).toBe('invalid_arguments');
      expect(hint?.issues).toEqual([expect.objectContaining({ path: '', constraint: 'schema_too_complex' })]);
      expect(hint?.issues?.[0]?.message).toMatch(
        /do not match the input schema of srv\.chain; the schema is too complex .* to explain further/,
      );
      expect(prepared.ok ? '' : prepared.result.error?.message).toMatch(/^Argument validation failed/);
    });
  }

  it('a valid argument to the same chain passes, and takes a handful of steps', () => {
    const tool = toolFromJsonSchema({ name: 'srv.chain', parameters: anyOfChain(25) });
    const { parsed, budget } = parseWithinBudget(tool.modelInput, { root: 'fine' });
    expect(parsed.success).toBe(true);
    expect(budget.exhausted).toBe(false);
    expect(budget.steps).toBeLessThan(100);
    expect(prepare(tool, { root: 'fine' }).ok).toBe(true);
  });

  it('an allOf chain (exponential even for valid input) is bounded too', () => {
    const $defs: Record<string, unknown> = { l0: { type: 'string' } };
    for (let i = 1; i <= 30; i++) {
      const below = { $ref: `#/$defs/l${i - 1}` };
      $defs[`l${i}`] = { allOf: [below, below] };
    }
    const tool = toolFromJsonSchema({
      name: 'srv.all',
      parameters: { type: 'object', properties: { v: { $ref: '#/$defs/l30' } }, $defs },
    });
    const prepared = prepare(tool, { v: 'x' });
    expect(prepared.ok ? undefined : prepared.result.retryHint?.issues?.[0]?.constraint).toBe(
      'schema_too_complex',
    );
  });

  it('the budget grows with the input: 100,000 union-typed items pass', () => {
    const tool = toolFromJsonSchema({
      name: 'srv.batch',
      parameters: {
        type: 'object',
        properties: { ids: { type: 'array', items: { anyOf: [{ type: 'integer' }, { type: 'string' }] } } },
      },
    });
    const ids = Array.from({ length: 100_000 }, (_, i) => (i % 2 === 0 ? i : `id-${i}`));
    const { parsed, budget } = parseWithinBudget(tool.modelInput, { ids });
    expect(parsed.success).toBe(true);
    expect(budget.steps).toBeGreaterThan(BASE_VALIDATION_STEPS);
  });

  it('a parse that passes no budget is bounded as well (the root run sizes one)', () => {
    const tool = toolFromJsonSchema({ name: 'srv.chain', parameters: anyOfChain(25) });
    const result = tool.modelInput.safeParse({ root: 42 });
    expect(result.success).toBe(false);
    const text = JSON.stringify(result.error?.issues);
    expect(text).toContain(STEP_BUDGET_ISSUE);
  });

  it('metering is idempotent and leaves zod schemas of our own unmetered', () => {
    const own = z.object({ a: z.string() });
    expect(parseWithinBudget(own, { a: 'x' }).budget.steps).toBe(0);
    const metered = withStepBudget(withStepBudget(z.object({ a: z.string() })));
    expect(parseWithinBudget(metered, { a: 'x' }).budget.steps).toBe(2);
  });
});
