import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { prepareToolCall } from '../../tools/call-tool.ts';
import { defineTool } from '../../tools/define-tool.ts';
import { ToolCatalog } from '../../tools/tool-catalog.ts';
import type { ToolResult } from '../../tools/tool-result.ts';
import { coerce, repairCall, withAnswers } from './repair-call.ts';

const book = defineTool({
  id: 'travel.book_flight',
  description: 'Books a flight',
  input: z.object({
    from: z.string().describe('Departure airport code'),
    to: z.string().describe('Arrival airport code'),
    seats: z.number().int().min(1),
    cabin: z.enum(['economy', 'business']),
  }),
  examples: [{ from: 'SFO', to: 'JFK', seats: 1, cabin: 'economy' }],
});
const catalog = new ToolCatalog([book]);
const advertised = catalog.ids;

/** Sends `input` through the real boundary and returns the failed result. */
function rejected(name: string, input: unknown): ToolResult {
  const prepared = prepareToolCall(catalog, { name, toolCallId: 'c1', input });
  if (prepared.ok) throw new Error('expected the boundary to reject the call');
  return prepared.result;
}

function repairedInput(result: ToolResult, canAsk = false): unknown {
  const repair = repairCall(result, { advertised, canAsk });
  if (repair.kind !== 'call') throw new Error(`expected a call, got ${repair.kind}: ${repair.note}`);
  expect(prepareToolCall(catalog, { ...repair.call, toolCallId: 'c2' }).ok).toBe(true);
  return repair.call.input;
}

describe('repairCall reads RetryHints the way Goa-AI recommends (docs/sources.md §Retry hints)', () => {
  it('coerces a number sent as a string to the expected type', () => {
    const input = repairedInput(
      rejected('travel.book_flight', { from: 'SFO', to: 'JFK', seats: '2', cabin: 'economy' }),
    );
    expect(input).toEqual({ from: 'SFO', to: 'JFK', seats: 2, cabin: 'economy' });
  });

  it('picks the allowed enum value that matches ignoring case', () => {
    const input = repairedInput(
      rejected('travel.book_flight', { from: 'SFO', to: 'JFK', seats: 1, cabin: 'Business' }),
    );
    expect(input).toMatchObject({ cabin: 'business' });
  });

  it('drops an unknown argument the hint names', () => {
    const input = repairedInput(
      rejected('travel.book_flight', { from: 'SFO', to: 'JFK', seats: 1, cabin: 'economy', meal: 'vegan' }),
    );
    expect(input).not.toHaveProperty('meal');
  });

  it('asks a person for missing fields when one can answer, and fills from exampleInput otherwise', () => {
    const result = rejected('travel.book_flight', { from: 'SFO', seats: 1, cabin: 'economy' });
    expect(repairCall(result, { advertised, canAsk: true })).toMatchObject({
      kind: 'ask',
      question: { missingFields: ['to'], call: { name: 'travel.book_flight', input: { from: 'SFO' } } },
    });
    expect(repairedInput(result)).toEqual({ from: 'SFO', to: 'JFK', seats: 1, cabin: 'economy' });
  });

  it('calls the closest advertised tool for tool_unavailable, keeping the input', () => {
    const repair = repairCall(rejected('travel.book_flights', { from: 'SFO' }), {
      advertised,
      canAsk: false,
    });
    expect(repair).toMatchObject({
      kind: 'call',
      call: { name: 'travel.book_flight', input: { from: 'SFO' } },
    });
  });

  it('keeps the complete members of JSON text cut short, never the value the cut went through', () => {
    const text = '{"from": "SFO", "to": "JFK", "seats": 1, "cabin": "econ';
    const result = rejected('travel.book_flight', text);
    expect(result.retryHint?.priorInput).toEqual({ $raw: text });
    const repair = repairCall(result, { advertised, canAsk: false });
    // "econ" is not what the model meant; the boundary's missing_fields hint will ask for it.
    expect(repair).toMatchObject({ kind: 'call', call: { input: { from: 'SFO', to: 'JFK', seats: 1 } } });
  });

  it('asks for what a cut may have lost when a person can answer: the cut member and unseen fields', () => {
    const result = rejected('travel.book_flight', '{"from": "SFO", "to": "JF');
    const repair = repairCall(result, { advertised, canAsk: true, inputSchema: book.inputSchema });
    expect(repair).toMatchObject({
      kind: 'ask',
      question: { missingFields: ['to', 'seats', 'cabin'], call: { input: { from: 'SFO' } } },
    });
  });

  it('coerces to the first type of a union that fits (`one of types: number, null`)', () => {
    const rated = defineTool({
      id: 'shop.find',
      description: 'Finds shops',
      input: z.object({ rating: z.number().nullable() }),
    });
    const prepared = prepareToolCall(new ToolCatalog([rated]), {
      name: 'shop.find',
      toolCallId: 'c1',
      input: { rating: '4.5' },
    });
    if (prepared.ok) throw new Error('expected a rejection');
    const repair = repairCall(prepared.result, { advertised: ['shop.find'], canAsk: false });
    expect(repair).toMatchObject({ kind: 'call', call: { input: { rating: 4.5 } } });
  });

  it('resends the input the call sent (from the transcript) when the hint has no priorInput', () => {
    const result: ToolResult = {
      name: 'travel.book_flight',
      toolCallId: 'c1',
      executed: true,
      retryHint: {
        reason: 'timeout',
        tool: 'travel.book_flight',
        restrictToTool: false,
        missingFields: [],
        message: 'timed out',
      },
    };
    expect(repairCall(result, { advertised, canAsk: false, sent: { from: 'SFO' } })).toMatchObject({
      kind: 'call',
      call: { name: 'travel.book_flight', input: { from: 'SFO' } },
    });
  });

  it('resends the same call after rate_limited or timeout', () => {
    const result: ToolResult = {
      name: 'travel.book_flight',
      toolCallId: 'c1',
      executed: true,
      retryHint: {
        reason: 'rate_limited',
        tool: 'travel.book_flight',
        restrictToTool: false,
        missingFields: [],
        message: 'slow down',
        priorInput: { from: 'SFO' },
      },
    };
    expect(repairCall(result, { advertised, canAsk: false })).toMatchObject({
      kind: 'call',
      call: { name: 'travel.book_flight', input: { from: 'SFO' } },
    });
  });

  it('gives up on a failure without a hint', () => {
    const result: ToolResult = { name: 'travel.book_flight', toolCallId: 'c1', executed: true };
    expect(repairCall(result, { advertised, canAsk: false }).kind).toBe('give_up');
  });
});

describe('repair helpers', () => {
  it('coerce converts only when nothing is lost', () => {
    expect(coerce('42', 'number')).toBe(42);
    expect(coerce('4.5', 'int')).toBeUndefined();
    expect(coerce('abc', 'number')).toBeUndefined();
    expect(coerce(7, 'string')).toBe('7');
    expect(coerce('True', 'boolean')).toBe(true);
  });

  it('withAnswers fills dotted paths into the prior input', () => {
    expect(withAnswers({ a: 1 }, { 'address.city': 'Paris', 'items.0.sku': 'X' })).toEqual({
      a: 1,
      address: { city: 'Paris' },
      items: [{ sku: 'X' }],
    });
  });
});
