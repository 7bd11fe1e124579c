import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { peerCopies, warnOnPeerCopies } from './peer-copies.ts';

const app = realpathSync(mkdtempSync(join(tmpdir(), 'toolwarden-app-')));
afterAll(() => rmSync(app, { recursive: true, force: true }));

/** An app folder with its own (fake) copy of a package. */
function install(name: string): string {
  const dir = join(app, 'node_modules', name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version: '0.0.0', main: 'index.js' }));
  writeFileSync(join(dir, 'index.js'), 'module.exports = {};');
  return dir;
}

describe('two copies of zod or the OTel API (issue 28 item 1)', () => {
  it('finds none when the app resolves the same copies as toolwarden (this checkout)', () => {
    expect(peerCopies(join(import.meta.dirname, '..'))).toEqual([]);
  });

  it('names both folders for each peer the app has its own copy of, and warns once', () => {
    const zod = install('zod');
    const otel = install('@opentelemetry/api');
    const ours = (name: string) => realpathSync(join(import.meta.dirname, '..', 'node_modules', name));

    expect(peerCopies(app)).toEqual([
      { name: 'zod', toolwarden: ours('zod'), app: zod },
      { name: '@opentelemetry/api', toolwarden: ours('@opentelemetry/api'), app: otel },
    ]);

    const warnings: string[] = [];
    warnOnPeerCopies((message) => warnings.push(message), app);
    warnOnPeerCopies((message) => warnings.push(message), app);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain(`two copies of zod: toolwarden uses ${ours('zod')}, the app ${zod}`);
  });
});
