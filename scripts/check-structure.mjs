#!/usr/bin/env node
// `node scripts/check-structure.mjs [--root DIR]`: the habits that keep the house as issue 37 left it.
//
// Fails (exit 1) on
// - a product function longer than MAX_FUNCTION_LINES (scripts/structure-rules.mjs),
// - an import from a lower layer to a higher one, or across rooms of one layer (LAYERS there),
// - a circle of imports between product files (type-only imports count: a circle of types still
//   means no file of it can be read alone),
// - an example that imports the project's source by path instead of `toolwarden` (examples are what
//   users copy: they must read as an app's code).
// Prints the exceptions it honoured, and the longest product function.
//
// Parsing is oxc-parser's (TypeScript, type-only imports included); the rules are ours.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseSync } from 'oxc-parser';
import * as defaultRules from './structure-rules.mjs';

/**
 * The room of a repository path: its top-level folder, `runtime/<sub>` under runtime/, `(root)` for
 * files at the top; a folder that SHARED_ROOMS joins to another is that room.
 *
 * @param {string} file repository path with forward slashes
 * @param {typeof defaultRules} [rules]
 * @returns {string}
 */
export function roomOf(file, rules = defaultRules) {
  const parts = file.split('/');
  if (parts.length === 1) return '(root)';
  const room = parts[0] === 'runtime' && parts.length > 2 ? `runtime/${parts[1]}` : parts[0];
  return rules.SHARED_ROOMS?.[room]?.room ?? room;
}

/** Line number (1-based) of each offset, from a sorted table of line starts. */
function lineAt(lineStarts, offset) {
  let low = 0;
  let high = lineStarts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (lineStarts[mid] <= offset) low = mid;
    else high = mid - 1;
  }
  return low + 1;
}

const FUNCTION_TYPES = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);

/** The name a function is known by: its own, its variable's, its property's or method's. */
function functionName(node, parent) {
  if (node.id?.name) return node.id.name;
  if (!parent) return '(anonymous)';
  if (parent.type === 'VariableDeclarator' && parent.id?.type === 'Identifier') return parent.id.name;
  if (
    (parent.type === 'MethodDefinition' ||
      parent.type === 'Property' ||
      parent.type === 'PropertyDefinition') &&
    parent.key
  )
    return parent.key.name ?? parent.key.value ?? '(computed)';
  return '(anonymous)';
}

/** Every function in a program with its first line, last line and name. */
function functionsOf(program, lineStarts) {
  const found = [];
  const visit = (node, parent) => {
    if (!node || typeof node.type !== 'string') return;
    if (FUNCTION_TYPES.has(node.type)) {
      const first = lineAt(lineStarts, node.start);
      const last = lineAt(lineStarts, node.end - 1);
      found.push({ name: functionName(node, parent), first, lines: last - first + 1 });
    }
    for (const key in node) {
      if (key === 'type' || key === 'start' || key === 'end') continue;
      const value = node[key];
      if (Array.isArray(value)) for (const item of value) visit(item, node);
      else if (value && typeof value === 'object') visit(value, node);
    }
  };
  visit(program, undefined);
  return found;
}

/** Relative import specifiers of a module (static imports, re-exports, dynamic `import('…')` of literals). */
function importsOf(result, source) {
  const specifiers = result.module.staticImports.map((entry) => entry.moduleRequest.value);
  for (const entry of result.module.staticExports)
    for (const item of entry.entries) if (item.moduleRequest) specifiers.push(item.moduleRequest.value);
  for (const dynamic of result.module.dynamicImports) {
    const text = source.slice(dynamic.moduleRequest.start, dynamic.moduleRequest.end);
    const literal = /^(['"`])([^'"`]*)\1$/.exec(text);
    if (literal) specifiers.push(literal[2]);
  }
  return [...new Set(specifiers)];
}

/** Resolves a relative specifier from a file to a repository path (as written: `.ts` paths). */
function resolveSpecifier(file, specifier) {
  return normalize(join(dirname(file), specifier))
    .split('\\')
    .join('/');
}

/** The strongly connected components of more than one file (Tarjan). */
function circles(graph) {
  let index = 0;
  const indexOf = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const connect = (node) => {
    indexOf.set(node, index);
    low.set(node, index);
    index++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!indexOf.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node), indexOf.get(next)));
    }
    if (low.get(node) === indexOf.get(node)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!indexOf.has(node)) connect(node);
  return found;
}

/**
 * Checks a tree against the rules.
 *
 * @param {{ root: string, files: string[], rules?: typeof defaultRules }} input `files`: repository
 *   paths (forward slashes) of the TypeScript files to read, relative to `root`.
 * @returns {{ violations: string[], honoured: string[], longest: { file: string, name: string, lines: number } | undefined, files: number }}
 *   `longest`: the longest function not among the exceptions.
 */
export function checkStructure({ root, files, rules = defaultRules }) {
  const violations = [];
  const honoured = [];
  const layerOf = new Map();
  rules.LAYERS.forEach((rooms, layer) => {
    for (const room of rooms) layerOf.set(room, layer);
  });
  const isProduct = (file) =>
    !rules.NOT_PRODUCT.some((prefix) => file.startsWith(prefix)) && !/\.test\.ts$/.test(file);
  const usedFunctions = new Set();
  const usedImports = new Set();
  const functionException = (file, name) => {
    const found = rules.EXCEPTIONS.functions.find((e) => e.file === file && e.name === name);
    if (found) usedFunctions.add(found);
    return found;
  };
  const importException = (from, to) => {
    const found = rules.EXCEPTIONS.imports.find((e) => e.from === from && e.to === to);
    if (found) usedImports.add(found);
    return found;
  };
  const graph = new Map();
  let longest;
  let read = 0;
  for (const file of files) {
    const product = isProduct(file);
    const example = file.startsWith('examples/');
    if (!product && !example) continue;
    const source = readFileSync(join(root, file), 'utf8');
    const result = parseSync(file, source);
    if (result.errors.length > 0) {
      violations.push(`${file}: does not parse: ${result.errors[0].message}`);
      continue;
    }
    read++;
    const targets = importsOf(result, source)
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => resolveSpecifier(file, specifier));
    if (example) {
      for (const target of targets)
        if (!target.startsWith('examples/'))
          violations.push(
            `${file}: imports ${target} by path; an example imports \`toolwarden\` as an app does`,
          );
      continue;
    }
    const lineStarts = [0];
    for (let i = 0; i < source.length; i++) if (source.charCodeAt(i) === 10) lineStarts.push(i + 1);
    for (const fn of functionsOf(result.program, lineStarts)) {
      const exception = fn.lines > rules.MAX_FUNCTION_LINES ? functionException(file, fn.name) : undefined;
      if (!exception && (!longest || fn.lines > longest.lines))
        longest = { file, name: fn.name, lines: fn.lines };
      if (fn.lines <= rules.MAX_FUNCTION_LINES) continue;
      const where = `${file}:${fn.first} ${fn.name} is ${fn.lines} lines (at most ${rules.MAX_FUNCTION_LINES})`;
      if (exception) honoured.push(`${where}: ${exception.reason}`);
      else violations.push(where);
    }
    const room = roomOf(file, rules);
    const layer = layerOf.get(room);
    if (layer === undefined)
      violations.push(`${file}: its room ${room} is on no layer of scripts/structure-rules.mjs`);
    const edges = [];
    for (const target of targets) {
      if (!isProduct(target)) continue;
      edges.push(target);
      const targetRoom = roomOf(target, rules);
      if (targetRoom === room || layer === undefined) continue;
      const targetLayer = layerOf.get(targetRoom);
      if (targetLayer !== undefined && targetLayer < layer) continue;
      const exception = importException(file, target);
      const where =
        targetLayer === layer
          ? `${file} imports ${target}: ${room} and ${targetRoom} are rooms of one layer`
          : `${file} imports ${target}: ${targetRoom} is above ${room}`;
      if (exception) honoured.push(`${where}: ${exception.reason}`);
      else violations.push(where);
    }
    graph.set(file, edges);
  }
  for (const component of circles(graph)) violations.push(`a circle of imports: ${component.join(' → ')}`);
  // An exception outlives its reason once the function is split or the import gone: named as a
  // violation, so the list in structure-rules.mjs stays the list of what is still open.
  const checked = new Set(files);
  for (const e of rules.EXCEPTIONS.functions)
    if (checked.has(e.file) && !usedFunctions.has(e))
      violations.push(
        `stale exception: ${e.file} ${e.name} is no longer over ${rules.MAX_FUNCTION_LINES} lines (or is gone): remove it from the exceptions`,
      );
  for (const e of rules.EXCEPTIONS.imports)
    if (checked.has(e.from) && !usedImports.has(e))
      violations.push(
        `stale exception: ${e.from} no longer imports ${e.to} across layers: remove it from the exceptions`,
      );
  return { violations, honoured, longest, files: read };
}

/** The repository's tracked and untracked-but-not-ignored TypeScript files. */
function repositoryFiles(root) {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', '*.ts'], {
    cwd: root,
    encoding: 'utf8',
  });
  return out
    .split('\n')
    .filter((file) => file !== '' && existsSync(join(root, file)))
    .sort();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const rootFlag = process.argv.indexOf('--root');
  const root = rootFlag > 0 ? process.argv[rootFlag + 1] : fileURLToPath(new URL('..', import.meta.url));
  const { violations, honoured, longest, files } = checkStructure({ root, files: repositoryFiles(root) });
  for (const [folder, { room, reason }] of Object.entries(defaultRules.SHARED_ROOMS ?? {}))
    console.log(`exception: ${folder} is part of the room ${room}: ${reason}`);
  for (const line of honoured) console.log(`exception: ${line}`);
  if (longest)
    console.log(
      `longest product function outside the exceptions: ${longest.name} in ${relative('.', longest.file)}, ${longest.lines} lines`,
    );
  for (const line of violations) console.error(`violation: ${line}`);
  console.log(
    `check-structure: ${files} files, ${violations.length} violations, ${honoured.length} exceptions`,
  );
  process.exitCode = violations.length > 0 ? 1 : 0;
}
