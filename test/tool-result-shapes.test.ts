/**
 * Tool results of one shape share one V8 map (issue 29). A spread in `toolResultToJSON` gave each
 * result, under many concurrent runs, a Map and a DescriptorArray of its own: 576 maps for 600
 * results, ~220 bytes each kept with every event or context that holds one, a map allocated per
 * call, and no shape an inline cache could share. Measured in a child process: the map check
 * needs `--allow-natives-syntax`.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('tool results under many concurrent runs', () => {
  it('share a handful of maps, not one each', () => {
    const output = execFileSync(
      process.execPath,
      ['--allow-natives-syntax', '--import', 'tsx', 'test/support/tool-result-maps.ts'],
      { cwd: process.cwd(), encoding: 'utf8', timeout: 60_000 },
    );
    const { results, maps } = JSON.parse(output.trim().split('\n').at(-1)!) as {
      results: number;
      maps: number;
    };

    expect(results).toBe(600);
    expect(maps).toBeLessThanOrEqual(3);
  }, 90_000);
});
