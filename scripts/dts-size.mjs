#!/usr/bin/env node
// `node scripts/dts-size.mjs [--max-kb 5] [--top N] [--dist DIR]` (issue 28 item 4): after `npm run build`,
// measures every top-level declaration of every dist/**/*.d.ts (a type, interface, class,
// function, const, as tsc emitted it) and fails when one is over the limit (default 5 KB). A
// declaration that large is a type TypeScript inlined (a machine type, `ReturnType<...>` of a
// closure) that IDE hovers and the TypeDoc pages then print whole: give it a named interface.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const distArg = process.argv.indexOf('--dist');
const dist = distArg === -1 ? join(root, 'dist') : process.argv[distArg + 1];
const arg = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
};
const maxBytes = arg('--max-kb', 5) * 1024;
const top = arg('--top', 10);

/**
 * Every top-level declaration of one .d.ts file as tsc prints it (statements start at column 0):
 * its name and its size in bytes, doc comments (its own and its members') and imports left out. (TypeScript 7 has no stable
 * JavaScript API to parse with; tsc's own layout is enough.)
 */
function declarationSizes(file, text) {
  const declarations = [];
  let current;
  let inComment = false;
  for (const line of text.split('\n')) {
    if (inComment) {
      if (line.includes('*/')) inComment = false;
      continue;
    }
    if (line.startsWith('/*')) {
      inComment = !line.includes('*/');
      continue;
    }
    const starts =
      /^(export |declare |interface |type |function |class |const |let |var |namespace |enum |abstract )/.test(
        line,
      );
    if (starts) {
      current = undefined;
      if (/^(import|export \{|export \*|export default \w+;|export type \{)/.test(line)) continue;
      const name =
        /(?:interface|type|function|class|const|let|var|namespace|enum)\s+([\w$]+)/.exec(line)?.[1] ??
        line.slice(0, 40);
      current = { file, name, bytes: 0 };
      declarations.push(current);
    } else if (/^import /.test(line)) {
      current = undefined;
      continue;
    }
    // Doc comments inside a declaration are not its type: they are left out too.
    if (current && !/^\s*(\/\*\*|\*|\*\/)/.test(line)) current.bytes += Buffer.byteLength(line) + 1;
  }
  return declarations;
}

const files = readdirSync(dist, { recursive: true, encoding: 'utf8' }).filter((file) =>
  file.endsWith('.d.ts'),
);
if (files.length === 0) {
  console.error('dts-size: no dist/**/*.d.ts: run npm run build first');
  process.exit(2);
}
const sizes = files
  .flatMap((file) =>
    declarationSizes(relative(root, join(dist, file)), readFileSync(join(dist, file), 'utf8')),
  )
  .sort((a, b) => b.bytes - a.bytes);
const over = sizes.filter((size) => size.bytes > maxBytes);
const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;
console.log(`dts-size: ${sizes.length} declarations in ${files.length} files; largest ${top}:`);
for (const size of sizes.slice(0, top))
  console.log(`  ${kb(size.bytes).padStart(9)}  ${size.file}  ${size.name}`);
if (over.length > 0) {
  console.error(`dts-size: ${over.length} declaration(s) over ${kb(maxBytes)}: give each a named interface`);
  process.exit(1);
}
console.log(`dts-size: every declaration is at most ${kb(maxBytes)}`);
