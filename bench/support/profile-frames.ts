/**
 * Where a V8 profile's frame comes from, for the CPU and allocation profilers of bench/: the file
 * (relative to the checkout, or to node_modules) and the npm package, `toolwarden` for our own.
 *
 * @module
 */

/** The frame's file: `node:…`, a path under node_modules, one of ours, or `(native / gc / idle)` for no URL. */
export function fileOf(url: string): string {
  if (url === '') return '(native / gc / idle)';
  const path = url.replace(/^file:\/\//, '');
  const nm = path.lastIndexOf('node_modules/');
  if (nm >= 0) return path.slice(nm + 'node_modules/'.length);
  if (path.startsWith('node:')) return path;
  return path.replace(`${process.cwd()}/`, '');
}

/** The frame's npm package (`@scope/name` or `name`), `node`, `toolwarden`, or the native bucket. */
export function packageOf(url: string): string {
  const file = fileOf(url);
  if (file.startsWith('(') || file.startsWith('node:')) return file.startsWith('node:') ? 'node' : file;
  if (!url.includes('node_modules/')) return 'toolwarden';
  const parts = file.split('/');
  return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
}
