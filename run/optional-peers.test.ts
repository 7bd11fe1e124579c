import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MissingPeerError, requireOptionalPeers } from './optional-peers.ts';

const root = join(import.meta.dirname, '..');

describe('requireOptionalPeers (issue 28 item 3)', () => {
  it('names every missing package and the npm install line, and only those', () => {
    const peers = { '@libsql/client': '^0.18.0', pg: '^8.23.1' };
    const error = (() => {
      try {
        requireOptionalPeers('toolwarden/x', peers, (name) => name === 'pg');
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(MissingPeerError);
    expect(error).toMatchObject({ entry: 'toolwarden/x', missing: ['@libsql/client'] });
    expect((error as Error).message).toBe(
      "toolwarden/x needs @libsql/client, an optional peer dependency of toolwarden that is not installed. Install it with: npm install '@libsql/client@^0.18.0'",
    );
  });

  it('resolves packages as an import from toolwarden would: installed ones pass, others throw', () => {
    expect(() => requireOptionalPeers('toolwarden/x', { zod: '^4' })).not.toThrow();
    expect(() => requireOptionalPeers('toolwarden/x', { 'no-such-package-tw': '^1' })).toThrow(
      "npm install 'no-such-package-tw@^1'",
    );
  });

  it('asks for the ranges package.json declares, at every entry point that checks', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      peerDependencies: Record<string, string>;
    };
    const checks = [
      'stores/sqlite.ts',
      'stores/postgres.ts',
      'models/index.ts',
      'cli/commands.ts',
      'temporal/worker.ts',
      'temporal/bundle.ts',
    ];
    let seen = 0;
    for (const file of checks) {
      const source = readFileSync(join(root, file), 'utf8');
      for (const call of source.matchAll(/requireOptionalPeers\('[^']+', \{([^}]*)\}\)/g)) {
        for (const [, name, range] of call[1]!.matchAll(/'?([@\w/.-]+)'?: '([^']+)'/g)) {
          expect(pkg.peerDependencies[name!], `${file}: ${name}`).toBe(range);
          seen++;
        }
      }
    }
    expect(seen).toBe(9);
  });
});
