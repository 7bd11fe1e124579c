import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The code cites the contract as `docs/<file>.md` or `docs/<file>.md §<Section>` (issue 16 item
 * 4): every cited file must exist and every cited section must be a `## §<Section> …` heading of
 * it; the old citations of a SPEC.md that is not in the repository must not come back; links
 * between the docs must land on a file and heading that exist.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const sources = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
  cwd: root,
  encoding: 'utf8',
})
  .split('\n')
  .filter(
    (file) =>
      /\.(ts|md|mjs|js|sh)$/.test(file) && !file.startsWith('docs/api/') && existsSync(join(root, file)),
  );

const headings = (doc: string) =>
  readFileSync(join(root, 'docs', doc), 'utf8')
    .split('\n')
    .filter((line) => /^#{2,3} /.test(line))
    .map((line) => line.replace(/^#+ /, ''));
/** GitHub's anchor for a heading: `§Injected fields` → `injected-fields`. */
const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} -]/gu, '')
    .replace(/ /g, '-');

describe('references to the contract in docs/', () => {
  it('cite only docs that exist, and sections those docs have', () => {
    const broken: string[] = [];
    let count = 0;
    for (const file of sources) {
      const text = readFileSync(join(root, file), 'utf8');
      for (const match of text.matchAll(/docs\/([\w-]+\.md)(?: §([A-Za-z][\w-]*))?/g)) {
        count++;
        const [cited, doc, section] = match as unknown as [string, string, string | undefined];
        if (!existsSync(join(root, 'docs', doc))) broken.push(`${file}: ${cited} (no such file)`);
        else if (section && !headings(doc).some((heading) => heading.startsWith(`§${section}`)))
          broken.push(`${file}: ${cited} (no "## §${section}" heading)`);
      }
    }
    expect(broken).toEqual([]);
    expect(count).toBeGreaterThan(150);
  });

  it('no longer cite a SPEC.md the repository does not have', () => {
    const stale = sources.filter((file) => /SPEC §|SPEC\.md/.test(readFileSync(join(root, file), 'utf8')));
    expect(stale.filter((file) => file !== 'test/docs-references.test.ts')).toEqual([]);
  });

  it('link between docs to files and headings that exist', () => {
    const broken: string[] = [];
    for (const file of sources.filter((name) => name.startsWith('docs/') || name === 'README.md')) {
      const base = file === 'README.md' ? '' : 'docs/';
      const text = readFileSync(join(root, file), 'utf8');
      for (const match of text.matchAll(/\]\(((?:docs\/)?[\w-]+\.md)(?:#([\w-]+))?\)/g)) {
        const [link, target, anchor] = match as unknown as [string, string, string | undefined];
        const path = target.startsWith('docs/') ? target : `${base}${target}`;
        if (!existsSync(join(root, path))) broken.push(`${file}: ${link}`);
        else if (anchor && path.startsWith('docs/') && !headings(path.slice(5)).map(slug).includes(anchor))
          broken.push(`${file}: ${link} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });
});
