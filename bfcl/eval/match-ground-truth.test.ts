import { describe, expect, it } from 'vitest';
import { callsMismatch, type ExpectedCall, mismatch, standardize } from './match-ground-truth.ts';

const weather: ExpectedCall = {
  key: 'e#0',
  tool: 'bfcl.get_weather',
  args: { location: ['Berkeley, CA', 'Berkeley'], unit: ['', 'celsius'], days: [3] },
  input: { location: 'Berkeley, CA', unit: 'celsius', days: 3 },
  schema: { properties: { unit: { type: 'string', default: 'fahrenheit' }, verbose: { default: false } } },
};

describe('the simplified BFCL checker', () => {
  it('accepts any acceptable value, strings compared as BFCL standardizes them', () => {
    expect(
      mismatch({ tool: 'bfcl.get_weather', input: { location: 'berkeley', days: 3 } }, weather),
    ).toBeUndefined();
    expect(standardize("Berkeley, C.A. 'x'")).toBe('berkeleyca"x"');
    expect(mismatch({ tool: 'bfcl.get_weather', input: { location: 'Oakland', days: 3 } }, weather)).toBe(
      'location: "Oakland" is none of ["Berkeley, CA","Berkeley"]',
    );
  });

  it('lets "" mean "may be left out", and takes a schema default zod filled in', () => {
    expect(
      mismatch(
        { tool: 'bfcl.get_weather', input: { location: 'Berkeley', days: 3, unit: 'fahrenheit' } },
        weather,
      ),
    ).toBeUndefined();
    expect(
      mismatch(
        { tool: 'bfcl.get_weather', input: { location: 'Berkeley', days: 3, verbose: false } },
        weather,
      ),
    ).toBeUndefined();
    expect(mismatch({ tool: 'bfcl.get_weather', input: { location: 'Berkeley' } }, weather)).toBe(
      'days: missing',
    );
    expect(
      mismatch({ tool: 'bfcl.get_weather', input: { location: 'Berkeley', days: 3, extra: 1 } }, weather),
    ).toBe('extra: not in the ground truth (1)');
  });

  it('matches ground-truth dicts field by field and lists element by element', () => {
    const order: ExpectedCall = {
      key: 'o#0',
      tool: 'bfcl.order',
      args: { items: [[{ sku: ['A1'], qty: [2, 2.0] }]], tags: [['x', 'y']] },
      input: {},
    };
    expect(
      mismatch({ tool: 'bfcl.order', input: { items: [{ sku: 'a1', qty: 2 }], tags: ['x', 'y'] } }, order),
    ).toBeUndefined();
    expect(
      mismatch({ tool: 'bfcl.order', input: { items: [{ sku: 'A1', qty: 3 }], tags: ['x', 'y'] } }, order),
    ).toBeDefined();
    expect(
      mismatch({ tool: 'bfcl.order', input: { items: [{ sku: 'A1', qty: 2 }], tags: ['y', 'x'] } }, order),
    ).toBeDefined();
  });

  it('pairs parallel calls one to one in any order, and nothing else may run', () => {
    const a = { ...weather, key: 'p#0', args: { location: ['Paris'] }, input: {} };
    const b = { ...weather, key: 'p#1', args: { location: ['Rome'] }, input: {} };
    const paris = { tool: 'bfcl.get_weather', input: { location: 'Paris' } };
    const rome = { tool: 'bfcl.get_weather', input: { location: 'Rome' } };
    expect(callsMismatch([rome, paris], [a, b])).toBeUndefined();
    expect(callsMismatch([paris, paris], [a, b])).toBe('p#1: location: "Paris" is none of ["Rome"]');
    expect(callsMismatch([paris], [a, b])).toBe('1 call(s) ran, the ground truth has 2');
  });
});
