import { describe, expect, it } from 'vitest';
import { pythonJsonDumps } from './python-json-dumps.ts';

describe('pythonJsonDumps', () => {
  it("writes Python's separators and escapes non-ASCII as \\uXXXX, as json.dumps does", () => {
    expect(pythonJsonDumps({ city: 'Zürich', tags: ['a', 1, true, null], nested: { 'k"': '漢' } })).toBe(
      '{"city": "Z\\u00fcrich", "tags": ["a", 1, true, null], "nested": {"k\\"": "\\u6f22"}}',
    );
  });

  it('writes characters outside the BMP as surrogate pairs and keeps DEL as is', () => {
    expect(pythonJsonDumps('😀\u007f')).toBe('"\\ud83d\\ude00\u007f"');
  });
});
