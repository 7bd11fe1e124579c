import { describe, expect, it } from 'vitest';
import { schemaAtPath } from './json-schema-path.ts';

/** `levels` definitions, each an `anyOf` of three references to the one below: 3^levels paths. */
function anyOfChain(levels: number, bottom: Record<string, unknown>): Record<string, unknown> {
  const $defs: Record<string, unknown> = { l0: bottom };
  for (let i = 1; i <= levels; i++) {
    const below = { $ref: `#/$defs/l${i - 1}` };
    $defs[`l${i}`] = { anyOf: [below, below, below] };
  }
  return { type: 'object', properties: { root: { $ref: `#/$defs/l${levels}` } }, $defs };
}

describe('schemaAtPath', () => {
  it('finds a field through unions and $refs', () => {
    const bottom = { type: 'object', properties: { city: { type: 'string', description: 'City' } } };
    expect(schemaAtPath(anyOfChain(3, bottom), ['root', 'city'])).toEqual({
      type: 'string',
      description: 'City',
    });
  });

  it('searches each union option once: a missing field under a 30-level anyOf chain answers at once (3^30 paths)', () => {
    expect(schemaAtPath(anyOfChain(30, { type: 'string' }), ['root', 'x'])).toBeUndefined();
  });
});
