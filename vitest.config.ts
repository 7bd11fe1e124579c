import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * `toolwarden` and its subpaths resolve to the sources (as tsconfig.json `paths` does for tsc and
 * tsx), so the examples import the package as an app would and still test this commit's code.
 */
const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  exports: Record<string, string | { default: string }>;
};
const toolwardenSources = Object.entries(pkg.exports).flatMap(([key, target]) =>
  typeof target === 'string'
    ? []
    : [
        {
          find: new RegExp(`^toolwarden${key === '.' ? '' : key.slice(1).replace(/[/.]/g, '\\$&')}$`),
          replacement: fileURLToPath(
            new URL(target.default.replace('./dist/', './').replace(/\.js$/, '.ts'), import.meta.url),
          ),
        },
      ],
);

export default defineConfig({
  resolve: { alias: toolwardenSources },
  test: {
    include: ['**/*.test.ts'],
    exclude: ['**/node_modules/**', 'dist/**'],
    testTimeout: 20_000,
    hookTimeout: 120_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
