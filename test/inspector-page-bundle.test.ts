import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PAGE_BUNDLE, pageBundleModule } from '../scripts/build-page.mjs';

/**
 * The page's script is committed generated (scripts/build-page.mjs, docs/inspection.md §Page
 * code): this fails when inspector/page-bundle.ts is not what inspector/page/*.ts bundle to.
 * In the full suite only: esbuild runs its binary as a subprocess.
 */
describe('inspector page bundle', () => {
  it('is what inspector/page/*.ts bundle to (run `node scripts/build-page.mjs` when this fails)', async () => {
    const committed = readFileSync(PAGE_BUNDLE, 'utf8');
    expect(committed === (await pageBundleModule()), 'inspector/page-bundle.ts is stale').toBe(true);
    expect(committed).not.toMatch(/<\/script/i);
  });
});
