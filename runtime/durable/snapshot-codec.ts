/**
 * The stored form of a run actor's persisted snapshot (docs/durability.md): XState's
 * `getPersistedSnapshot()` without the second copy of the run context it carries.
 *
 * XState persists every running child actor with its input. Until the `steps` actor the run
 * machine's per-step child actors (`plan`, `validateBatch`, `reviewResults`) took
 * `{ kind?, context }`, so a snapshot taken while one of them ran held the whole run context
 * twice, transcript included (a 10-step run: 7.6 KB instead of 3.8 KB), and tool children
 * repeated their pending call and the run labels. Any child an app's machine adds still can.
 *
 * `packSnapshot` removes every member of a child's input that is the very object found in the
 * context (`context`, `context.labels`, `context.batch.pending[1]`, ...) and records where it was;
 * `unpackSnapshot` puts the same objects back. Identity decides, never equality, so a member that
 * only looks like part of the context is kept: a restored actor sees exactly what it would have.
 *
 * ```json
 * { "status": "active", "value": "planning", "context": { ... },
 *   "children": { "0.run.planning": { "snapshot": { "status": "active", "input": { "kind": "resume" } }, ... } },
 *   "$toolwarden.refs": { "0.run.planning": { "context": [] } } }
 * ```
 *
 * Since the run's step work moved to one `steps` actor (run-steps.ts), a run's children carry no
 * context: the runtime stores snapshots unpacked, and `unpackSnapshot` stays for the snapshots
 * stored before (packed or not), which
 * `unpackSnapshot` also gives a `steps` actor (their per-step children are dropped and the run
 * requests that work again). A snapshot without `$toolwarden.refs` and with a `steps` child (or
 * not active) unpacks to itself.
 *
 * @module
 */

const REFS = '$toolwarden.refs';
/** How deep into the context shared objects are looked for: `context.batch.pending[1]` is 3. */
const INDEX_DEPTH = 3;

/** Path from the context to a shared object: `[]` is the context, `['batch', 'pending', 1]` a call. */
type ContextPath = (string | number)[];

interface PersistedChild {
  snapshot?: { input?: unknown; [key: string]: unknown };
  [key: string]: unknown;
}

interface PersistedRun {
  context?: unknown;
  children?: Record<string, PersistedChild>;
  [REFS]?: Record<string, Record<string, ContextPath>>;
  [key: string]: unknown;
}

/**
 * Where objects were found in the context at earlier packs of one run (`null`: not in it). The
 * context is immutable and rebuilt member by member, so an object mostly stays where it was; a
 * remembered path is checked before it is used, and an object remembered as absent is simply
 * stored in full. Saves walking the context (and its transcript) on every write.
 */
export type PackCache = WeakMap<object, ContextPath | null>;

/**
 * The snapshot to store: child inputs lose the members that are context objects. Returns the
 * input itself when nothing is shared (no copy); never changes its argument.
 */
export function packSnapshot(persisted: unknown, cache: PackCache = new WeakMap()): unknown {
  const run = persisted as PersistedRun;
  if (!isObject(run) || !isObject(run.children) || !isObject(run.context)) return persisted;
  const context = run.context as Record<string, unknown>;
  const find = (value: object): ContextPath | undefined => {
    if (value === context) return [];
    for (const key in context) if (context[key] === value) return [key];
    const known = cache.get(value);
    if (known === null) return undefined;
    if (known !== undefined && follow(context, known) === value) return known;
    const path = pathTo(context, value);
    cache.set(value, path ?? null);
    return path;
  };
  const refs: Record<string, Record<string, ContextPath>> = {};
  const children: Record<string, PersistedChild> = {};
  let shared = false;
  for (const [id, child] of Object.entries(run.children)) {
    children[id] = child;
    const input = child.snapshot?.input;
    if (!isObject(input) || Array.isArray(input)) continue;
    let packed: Record<string, unknown> | undefined;
    for (const [member, value] of Object.entries(input)) {
      const path = isObject(value) ? find(value) : undefined;
      if (path === undefined) continue;
      // Built without `delete`, which would leave a slow (dictionary-mode) object to copy.
      packed ??= withoutShared(input as Record<string, unknown>, find);
      refs[id] ??= {};
      refs[id][member] = path;
    }
    if (packed !== undefined) {
      children[id] = { ...child, snapshot: { ...child.snapshot, input: packed } };
      shared = true;
    }
  }
  // Object.assign: a member added after a spread costs ~0.5 µs on Node 20 (run-updates.ts).
  return shared ? Object.assign({}, run, { children, [REFS]: refs }) : persisted;
}

/**
 * The snapshot XState restores from: child inputs get their context objects back.
 *
 * @throws TypeError when a recorded path does not lead to an object of the stored context (the
 *   snapshot was altered after it was written).
 */
export function unpackSnapshot(stored: unknown): unknown {
  const run = stored as PersistedRun;
  if (!isObject(run)) return stored;
  if (!isObject(run[REFS])) return withStepsActor(run);
  const { [REFS]: refs, ...rest } = run;
  const children: Record<string, PersistedChild> = { ...rest.children };
  for (const [id, members] of Object.entries(refs ?? {})) {
    const child = children[id];
    if (child === undefined) continue;
    const input: Record<string, unknown> = { ...(child.snapshot?.input as Record<string, unknown>) };
    for (const [member, path] of Object.entries(members)) input[member] = resolve(rest.context, path, id);
    children[id] = { ...child, snapshot: { ...child.snapshot, input } };
  }
  return withStepsActor({ ...rest, children });
}

/** The actor logics a run machine invoked per step before its `steps` actor (run-steps.ts). */
const STEP_ACTOR_SOURCES = new Set(['plan', 'validateBatch', 'executeTool', 'reviewResults', 'sleepUntil']);

/**
 * A snapshot stored before the run had a `steps` actor (a child actor per planner turn, tool call
 * and policy consultation) restored as one with it: the old children go, a `steps` actor comes
 * that says `steps.restored` on start, and the run requests again what those children were
 * doing, as a restore re-ran them before.
 */
export function withStepsActor<T>(snapshot: T): T {
  const run = snapshot as PersistedRun;
  if (!isObject(run)) return snapshot;
  const children = run.children ?? {};
  if (run.status !== 'active' || !isObject(run.context) || 'steps' in children) return snapshot;
  const kept: Record<string, PersistedChild> = {};
  for (const [id, child] of Object.entries(children)) {
    if (!STEP_ACTOR_SOURCES.has(child.src as string)) kept[id] = child;
  }
  kept.steps = {
    snapshot: { status: 'active', output: undefined, error: undefined, input: undefined },
    src: 'runSteps',
    syncSnapshot: false,
  };
  return { ...run, children: kept } as T;
}

/** `input` without the members `find` locates in the context. */
function withoutShared(
  input: Record<string, unknown>,
  find: (value: object) => ContextPath | undefined,
): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [member, value] of Object.entries(input)) {
    if (!isObject(value) || find(value) === undefined) kept[member] = value;
  }
  return kept;
}

/**
 * The path to `target` in the context, at most {@link INDEX_DEPTH} steps down
 * (`batch.pending.1` is three), by identity; depth first, members in order. Compares identities
 * only, allocating nothing until it finds the target: most objects looked for (a tool call's
 * `meta`) are not in the context, and indexing every object of it (the whole transcript) for
 * each new child cost more than the rest of the pack.
 */
function pathTo(context: object, target: object): ContextPath | undefined {
  const path: ContextPath = [];
  const search = (value: object): boolean => {
    if (path.length === INDEX_DEPTH) return false;
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) {
        const member: unknown = value[index];
        if (!isObject(member)) continue;
        path.push(index);
        if (member === target || search(member)) return true;
        path.pop();
      }
      return false;
    }
    for (const key in value) {
      const member: unknown = (value as Record<string, unknown>)[key];
      if (!isObject(member)) continue;
      path.push(key);
      if (member === target || search(member)) return true;
      path.pop();
    }
    return false;
  };
  return search(context) ? path : undefined;
}

function follow(context: unknown, path: ContextPath): unknown {
  let value = context;
  for (const step of path) {
    value = isObject(value) ? (value as Record<string | number, unknown>)[step] : undefined;
  }
  return value;
}

function resolve(context: unknown, path: ContextPath, childId: string): unknown {
  const value = follow(context, path);
  if (!isObject(value)) {
    throw new TypeError(
      `Stored snapshot: child "${childId}" refers to context/${path.join('/')}, which is not there`,
    );
  }
  return value;
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}
