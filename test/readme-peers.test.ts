import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The README's peer table names every test peer `scripts/` can start (issue 28 item 8: Temporal
 * was missing), and says how to start it.
 */
const root = join(import.meta.dirname, '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const table = readme.slice(
  readme.indexOf('### Integration suites and their peers'),
  readme.indexOf('## The main job'),
);

describe('README peer table', () => {
  const peers = readdirSync(join(root, 'scripts')).filter((name) => name.endsWith('.sh'));

  it.each(peers)('names scripts/%s and how to start it', (script) => {
    expect(peers.length).toBeGreaterThanOrEqual(5);
    expect(table).toContain(`scripts/${script}`);
  });
});
