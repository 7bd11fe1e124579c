import { afterEach, describe, expect, it, vi } from 'vitest';
import { sharedBfclDataDir } from './shared-data-suite.ts';

describe('sharedBfclDataDir', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
  });

  it('warns, naming the suite and the missing folder, and returns undefined outside CI', () => {
    vi.stubEnv('CI', '');
    vi.stubEnv('TOOLWARDEN_TEST_PEERS', '');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});

    expect(sharedBfclDataDir('bfcl/example suite', '/nowhere/shared/data/bfcl')).toBeUndefined();
    expect(warn).toHaveBeenCalledWith(
      'Skipping bfcl/example suite: the BFCL data folder /nowhere/shared/data/bfcl is missing (with CI=true this fails instead)',
    );
  });

  it('throws with CI=true, so CI never skips the real-data suites quietly', () => {
    vi.stubEnv('CI', 'true');
    vi.stubEnv('TOOLWARDEN_TEST_PEERS', '');

    expect(() => sharedBfclDataDir('bfcl/example suite', '/nowhere/shared/data/bfcl')).toThrowError(
      'bfcl/example suite: the BFCL data folder /nowhere/shared/data/bfcl is missing, and CI=true requires it',
    );
  });

  it('leaves the real data to the full suite under npm run test:unit, saying so', () => {
    vi.stubEnv('TOOLWARDEN_TEST_PEERS', 'off');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});

    expect(sharedBfclDataDir('bfcl/example suite', import.meta.dirname)).toBeUndefined();
    expect(warn).toHaveBeenCalledWith(
      'Skipping bfcl/example suite: the real BFCL data is read by the full suite (npm test), not npm run test:unit',
    );
  });
});
