import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TOOL_ID_PATTERN } from '../tools/index.ts';
import { nameForToolId, toolIdForName } from './bfcl-tool-id.ts';
import { sharedBfclDataDir } from './shared-data-suite.ts';

describe('toolIdForName / nameForToolId', () => {
  it.each([
    ['get_weather', 'bfcl.get_weather'],
    ['math.sqrt', 'bfcl.math.sqrt'],
    ['version_api.VersionApi.get_version', 'bfcl.version_api.VersionApi.get_version'],
    ['send-mail', 'bfcl.send-2d-mail'],
    ['a b', 'bfcl.a-20-b'],
    ['.hidden', 'bfcl.--.hidden'],
    ['', 'bfcl.--'],
    ['météo', 'bfcl.m-e9-t-e9-o'],
  ])('%j ↔ %s', (name, id) => {
    expect(toolIdForName(name)).toBe(id);
    expect(TOOL_ID_PATTERN.test(id)).toBe(true);
    expect(nameForToolId(id)).toBe(name);
  });

  it('maps any name to a valid tool id and back to the same name', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (name) => {
        const id = toolIdForName(name);
        return TOOL_ID_PATTERN.test(id) && nameForToolId(id) === name;
      }),
      { numRuns: 2000 },
    );
  });

  it('gives different names different ids', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 }), (a, b) => {
        fc.pre(a !== b);
        return toolIdForName(a) !== toolIdForName(b);
      }),
      { numRuns: 2000 },
    );
  });

  it('maps back only canonical ids of its own toolset', () => {
    expect(nameForToolId('crm.upsert_profile')).toBeUndefined();
    expect(nameForToolId('bfcl.-61-')).toBeUndefined(); // "a" needs no escape: bfcl.a is its id
    expect(nameForToolId('bfcl.-110000-')).toBeUndefined(); // beyond the last code point
    expect(nameForToolId('bfcl')).toBeUndefined();
  });

  it('uses another toolset when asked', () => {
    expect(toolIdForName('cd', 'fs')).toBe('fs.cd');
    expect(nameForToolId('fs.cd', 'fs')).toBe('cd');
  });
});

const dataDir = sharedBfclDataDir('bfcl/bfcl-tool-id (every real BFCL function name)');

describe.skipIf(!dataDir)('tool ids of every BFCL v4 function name', () => {
  it('needs no escape for any of the 1,998 distinct names, and maps each back', async () => {
    const names = new Set<string>();
    const files = [
      ...(await readdir(dataDir!)).filter((f) => /^BFCL_v4_.*\.json$/.test(f)),
      ...(await readdir(join(dataDir!, 'multi_turn_func_doc'))).map((f) => `multi_turn_func_doc/${f}`),
    ];
    for (const file of files) {
      for (const line of (await readFile(join(dataDir!, file), 'utf8')).split('\n')) {
        let value: { name?: string; function?: { name: string }[] };
        try {
          value = JSON.parse(line);
        } catch {
          continue; // blank lines, and the one file that is not JSON Lines
        }
        for (const doc of value.function ?? (value.name ? [value as { name: string }] : []))
          names.add(doc.name);
      }
    }

    const ids = [...names].map((name) => toolIdForName(name));

    expect(names.size).toBe(1998);
    expect(ids.filter((id) => id.includes('-'))).toEqual([]);
    expect([...names].every((name) => nameForToolId(toolIdForName(name)) === name)).toBe(true);
    expect(new Set(ids).size).toBe(names.size);
  });
});
