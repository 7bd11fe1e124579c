// TypeDoc for `npm run docs` (docs/typedoc/ holds TypeDoc and the TypeScript 6.0 it needs): one
// module per entry point of package.json `exports`, so a new subpath is documented without
// editing this file.
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
const entryPoints = Object.values(pkg.exports)
  .filter((target) => typeof target === 'object')
  .map((target) => target.default.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts'));

/** @type {Partial<import('typedoc').TypeDocOptions>} */
export default {
  name: 'toolwarden',
  entryPoints,
  tsconfig: 'tsconfig.build.json',
  out: 'docs/api',
  readme: 'none',
  excludePrivate: true,
  excludeInternal: true,
  validation: { notExported: false, invalidLink: true, notDocumented: false },
};
