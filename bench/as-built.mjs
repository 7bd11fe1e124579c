// Loads the checkout's TypeScript the way `npm run build` compiles it (scripts/build.mjs: esbuild,
// no `keepNames`), for heap figures of the code as it ships:
//
//     node --import ./bench/as-built.mjs bench/idle-heap.bench.ts
//
// tsx compiles with `keepNames`, which wraps every function in `__name(fn, "name")`; defining
// `name` on a closure turns its properties into a dictionary, 256 bytes more per closure. A run
// holds ~18 closures, so under tsx a live run measures ~4.6 KB more than the built package's.
import { readFile } from 'node:fs/promises';
import { register } from 'node:module';
import { fileURLToPath } from 'node:url';
import { isMainThread } from 'node:worker_threads';

if (isMainThread) register(import.meta.url);

/** Module hook (the loader thread): `.ts` files through esbuild's transform, as ES modules. */
export async function load(url, context, next) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return next(url, context);
  const { transform } = await import('esbuild');
  const source = await readFile(fileURLToPath(url), 'utf8');
  const { code } = await transform(source, {
    loader: 'ts',
    format: 'esm',
    target: 'node20',
    sourcefile: url,
  });
  return { format: 'module', source: code, shortCircuit: true };
}
