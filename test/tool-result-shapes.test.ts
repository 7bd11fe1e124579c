/**
 * Tool results of one shape share one V8 map (issue 29). A spread in `toolResultToJSON` gave each
 * result, under many concurrent runs, a Map and a DescriptorArray of its own: 576 maps for 600
 * results, ~220 bytes each kept with every event or context that holds one, a map allocated per
 * call, and no shape an inline cache could share. Measured in a child process: the map check
 * needs `--allow-natives-syntax`. The same for the options XState keeps per actor.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** Runs a child script of test/support under `--allow-natives-syntax`; its last line, parsed. */
function childJson<T>(script: string): T {
  const output = execFileSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', script], {
    cwd: process.cwd(),
    encoding: 'utf8',
    timeout: 60_000,
  });
  return JSON.parse(output.trim().split('\n').at(-1)!) as T;
}

describe('tool results under many concurrent runs', () => {
  it('share a handful of maps, not one each', () => {
    const { results, maps } = childJson<{ results: number; maps: number }>(
      'test/support/tool-result-maps.ts',
    );

    expect(results).toBe(600);
    expect(maps).toBeLessThanOrEqual(3);
  }, 90_000);
});

/**
 * XState builds each actor's options as `{ ...defaultOptions, ...options }`, which on Node 20's V8
 * gives every object a map of its own (96 of 100 runs had one, for each of their two actors: ~0.5 KB
 * a waiting run, issue 29 item 3). Once started, a hosted run's actors keep a copy that shares one.
 */
describe('XState options of waiting runs', () => {
  it('share one map per actor kind and hold no input', () => {
    const { runs, rootMaps, childMaps, inputs } = childJson<{
      runs: number;
      rootMaps: number;
      childMaps: number;
      inputs: number;
    }>('test/support/actor-option-maps.ts');

    expect(runs).toBe(100);
    expect(rootMaps).toBeLessThanOrEqual(2);
    expect(childMaps).toBeLessThanOrEqual(2);
    expect(inputs).toBe(0);
  }, 90_000);
});
