import { describe, expect, it } from 'vitest';
import { toSourceText } from './source-text.ts';

// The expected texts are the forms upstream java_type_converter / js_type_converter decode back
// into the value (see the regular expressions in those converters at the pinned commit).
describe('toSourceText for Java', () => {
  it.each([
    [true, { type: 'boolean' }, 'true'],
    [42, { type: 'integer' }, '42'],
    [0.5, { type: 'double' }, '0.5'],
    [120, { type: 'long' }, '120L'],
    [3.14, { type: 'float' }, '3.14f'],
    ['AnalyticsDB', { type: 'String' }, 'AnalyticsDB'],
    ['mapController', { type: 'any' }, 'mapController'],
    [[1, 2, 3], { type: 'Array', items: { type: 'integer' } }, 'new int[]{1, 2, 3}'],
    [['a', 'b'], { type: 'Array', items: { type: 'String' } }, 'new String[]{a, b}'],
    [
      [101, 102],
      { type: 'ArrayList', items: { type: 'long' } },
      'new ArrayList<>(Arrays.asList(101L, 102L))',
    ],
    [
      ['x', 'y'],
      { type: 'ArrayList', items: { type: 'String' } },
      'new ArrayList<>(Arrays.asList("x", "y"))',
    ],
    [[], { type: 'ArrayList', items: { type: 'String' } }, 'new ArrayList<>()'],
    [
      { limit: 50, schemaFilter: 'public' },
      { type: 'HashMap' },
      'new HashMap<String, Object>() {{ put("limit", 50); put("schemaFilter", "public"); }}',
    ],
    [{}, { type: 'HashMap' }, 'new HashMap<>()'],
  ])('%j as %j → %s', (value, schema, text) => {
    expect(toSourceText(value, schema, 'java')).toBe(text);
  });

  it('writes a variable the ground truth names for a non-string type as it is', () => {
    expect(toSourceText('EventRequest.SUSPEND_ALL', { type: 'integer' }, 'java')).toBe(
      'EventRequest.SUSPEND_ALL',
    );
    expect(toSourceText('textBuffer', { type: 'Array', items: { type: 'char' } }, 'java')).toBe('textBuffer');
  });
});

describe('toSourceText for JavaScript', () => {
  it.each([
    [false, { type: 'Boolean' }, 'false'],
    [500, { type: 'integer' }, '500'],
    [9, { type: 'Bigint' }, '9n'],
    ['userInputField', { type: 'String' }, 'userInputField'],
    [[60, 30], { type: 'array', items: { type: 'integer' } }, '[60, 30]'],
    [['completed', 'failed'], { type: 'array', items: { type: 'String' } }, '["completed", "failed"]'],
    [{ priority: 'urgent', n: 2 }, { type: 'dict' }, '{"priority":"urgent","n":2}'],
  ])('%j as %j → %s', (value, schema, text) => {
    expect(toSourceText(value, schema, 'javascript')).toBe(text);
  });
});
