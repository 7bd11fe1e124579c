/**
 * Setup file of `npm run test:unit` (vitest.unit.config.ts): the unit run starts no process. Every
 * way `node:child_process` starts one throws, naming the rule, so a test that needs a subprocess
 * fails here and belongs in the full suite (list it in `vitest.unit.config.ts`).
 *
 * @module
 */

import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';

const starters = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;
for (const name of starters) {
  (childProcess as unknown as Record<string, unknown>)[name] = () => {
    throw new Error(
      `npm run test:unit starts no subprocess (child_process.${name}); this test belongs to the full suite: ` +
        'add its file to SLOW_OR_OUTSIDE in vitest.unit.config.ts',
    );
  };
}
// Named imports (`import { spawn } from 'node:child_process'`) see the replacements too.
syncBuiltinESMExports();
