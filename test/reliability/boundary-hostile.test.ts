/**
 * Issue 12, defect 9 (the boundary's parts): a Proxy whose traps throw made `prepareToolCall`
 * throw; a schema field named `constructor` or `prototype` made a tool uncallable, and
 * `__proto__` was dropped silently. The boundary never throws, and such tools are refused where
 * they are defined.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { prepareToolCall } from '../../tools/call-tool.ts';
import { defineTool, ToolDefinitionError } from '../../tools/define-tool.ts';
import { toolFromJsonSchema } from '../../tools/json-schema-tool.ts';
import { ToolCatalog } from '../../tools/tool-catalog.ts';

const search = defineTool({
  id: 'kb.search',
  description: 'Searches',
  input: z.object({ q: z.string() }),
  execute: async () => [],
});
const catalog = new ToolCatalog([search]);
const throwing = () =>
  new Proxy(
    {},
    {
      get() {
        throw new Error('trap');
      },
      ownKeys() {
        throw new Error('keys');
      },
      getPrototypeOf() {
        throw new Error('proto');
      },
    },
  );

describe('prepareToolCall with a Proxy whose every trap throws', () => {
  it.each([
    ['as the input of a known tool', 'kb.search', throwing()],
    ['as the input of an unknown tool', 'kb.serch', throwing()],
    ['as the tool name', throwing(), {}],
  ])('answers with a failed result, never a throw (%s)', (_, name, input) => {
    const prepared = prepareToolCall(catalog, { name: name as string, toolCallId: 'c1', input });
    expect(prepared.ok).toBe(false);
    if (!prepared.ok) expect(prepared.result.executed).toBe(false);
  });
});

describe('a tool whose input has a field the boundary refuses', () => {
  it.each(['constructor', 'prototype', '__proto__'])('is refused at defineTool, naming "%s"', (field) => {
    const input = z.object({ q: z.string(), nested: z.object({ [field]: z.string() }) });
    expect(() => defineTool({ id: 'kb.bad', description: 'x', input, execute: async () => 1 })).toThrowError(
      new RegExp(`field named "${field}" \\(nested\\.${field}\\)`),
    );
  });

  it('is refused from plain JSON Schema too', () => {
    expect(() =>
      toolFromJsonSchema({
        name: 'kb.bad',
        description: 'x',
        parameters: { type: 'object', properties: { constructor: { type: 'string' } } },
      }),
    ).toThrowError(ToolDefinitionError);
  });
});
