import { afterEach, describe, expect, it, vi } from 'vitest';
import { sharedBfclDataDir } from './shared-data-suite.ts';

describe('sharedBfclDataDir', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
  });

  it('warns, naming the suite and the missing folder, and returns undefined outside CI', () => {
    vi.stubEnv('CI', '');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});

    expect(sharedBfclDataDir('bfcl/example suite', '/nowhere/shared/data/bfcl')).toBeUndefined();
    expect(warn).toHaveBeenCalledWith(
      'Skipping bfcl/example suite: the BFCL data folder /nowhere/shared/data/bfcl is missing (with CI=true this fails instead)',
    );
  });

  it('throws with CI=true, so CI never skips the real-data suites quietly', () => {
    vi.stubEnv('CI', 'true');

    expect(() => sharedBfclDataDir('bfcl/example suite', '/nowhere/shared/data/bfcl')).toThrowError(
      'bfcl/example suite: the BFCL data folder /nowhere/shared/data/bfcl is missing, and CI=true requires it',
    );
  });
});
