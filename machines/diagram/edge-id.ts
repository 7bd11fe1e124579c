import type { AnyStateNode, AnyTransitionDefinition } from 'xstate';

/**
 * What kind of transition an edge is, read from its event descriptor (XState v5 naming):
 *
 * | kind            | event descriptor                         | label            |
 * |-----------------|------------------------------------------|------------------|
 * | `event`         | the event type (`cancel`, `tool.*`)      | the event type   |
 * | `always`        | `''` (eventless)                         | `always`         |
 * | `after`         | `xstate.after.<delay>.<stateId>`         | `after <delay>`  |
 * | `done.invoke`   | `xstate.done.actor.<invokeId>`           | `done(<src>)`    |
 * | `error.invoke`  | `xstate.error.actor.<invokeId>`          | `error(<src>)`   |
 * | `snapshot.invoke` | `xstate.snapshot.<invokeId>`           | `snapshot(<src>)`|
 * | `done.state`    | `xstate.done.state.<stateId>`            | `done`           |
 */
export type EdgeKind =
  | 'event'
  | 'always'
  | 'after'
  | 'done.invoke'
  | 'error.invoke'
  | 'snapshot.invoke'
  | 'done.state';

/** How one transition's event reads: its kind, its stable key in edge ids, its label. */
export interface EdgeEvent {
  kind: EdgeKind;
  /** The raw event descriptor XState matches (`''` for `always`). */
  eventType: string;
  /** Stable and readable: no generated invoke ids (`done.invoke.plan`, `always`, `after.500`). */
  key: string;
  label: string;
  /** The invoked actor's `src` for `*.invoke` kinds. */
  invoke?: string;
  /** The delay (ms or a named delay) for `after`. */
  delay?: string | number;
}

/**
 * Names an invoke for edge keys and labels: its explicit id, else its `src`, suffixed with its
 * position when two invokes of the state would read the same. Generated ids
 * (`0.run.planning`) are never used: they encode the position and would change with the config.
 */
function invokeNames(node: AnyStateNode): Map<string, string> {
  const names = new Map<string, string>();
  const generated = (id: string, index: number) => id === `${index}.${node.id}`;
  const raw = node.invoke.map((def, index) =>
    generated(def.id, index) ? (typeof def.src === 'string' ? def.src : 'inline') : def.id,
  );
  node.invoke.forEach((def, index) => {
    const name = raw[index]!;
    names.set(def.id, raw.filter((other) => other === name).length > 1 ? `${name}.${index}` : name);
  });
  return names;
}

/** Classifies a transition's event descriptor (see {@link EdgeKind}). */
export function edgeEventOf(source: AnyStateNode, eventType: string): EdgeEvent {
  if (eventType === '') return { kind: 'always', eventType, key: 'always', label: 'always' };
  const invokes = invokeNames(source);
  for (const [prefix, kind, word] of [
    ['xstate.done.actor.', 'done.invoke', 'done'],
    ['xstate.error.actor.', 'error.invoke', 'error'],
    ['xstate.snapshot.', 'snapshot.invoke', 'snapshot'],
  ] as const) {
    if (!eventType.startsWith(prefix)) continue;
    const name = invokes.get(eventType.slice(prefix.length));
    if (name !== undefined)
      return { kind, eventType, key: `${kind}.${name}`, label: `${word}(${name})`, invoke: name };
  }
  if (eventType === `xstate.done.state.${source.id}`) {
    return { kind: 'done.state', eventType, key: 'done.state', label: 'done' };
  }
  const suffix = `.${source.id}`;
  if (eventType.startsWith('xstate.after.') && eventType.endsWith(suffix)) {
    const raw = eventType.slice('xstate.after.'.length, -suffix.length);
    const delay = /^\d+$/.test(raw) ? Number(raw) : raw;
    return {
      kind: 'after',
      eventType,
      key: `after.${raw}`,
      label: typeof delay === 'number' ? `after ${delay}ms` : `after ${raw}`,
      delay,
    };
  }
  // Completions of spawned children (`xstate.done.actor.tool.*`) read like invoke completions.
  const spawned = /^xstate\.(done|error)\.actor\.(.+)$/.exec(eventType);
  const label = spawned ? `${spawned[1]}(${spawned[2]})` : eventType;
  return { kind: 'event', eventType, key: eventType, label };
}

/** The transitions of `source` that share `eventType`, in document order (their priority). */
export function transitionsOf(source: AnyStateNode, eventType: string): readonly AnyTransitionDefinition[] {
  return eventType === '' ? (source.always ?? []) : (source.transitions.get(eventType) ?? []);
}

/**
 * The edge id of a transition: `<source state id>:<event key>:<index>`, where the index is the
 * transition's position among those of the same source and event (guarded alternatives), e.g.
 * `run.planning:done.invoke.plan:3`, `run.routing:always:7`, `run:cancel:0`.
 *
 * Stable across `machine.provide()` copies and processes: it is computed from the state id, the
 * event and the config order, never from object identity. `@xstate.microstep` inspection events
 * carry the transition objects, so this maps a taken transition to its drawn edge.
 */
export function edgeIdOf(transition: AnyTransitionDefinition): string {
  const source = transition.source;
  const event = edgeEventOf(source, transition.eventType);
  const siblings = transitionsOf(source, transition.eventType);
  let index = siblings.indexOf(transition);
  if (index < 0) index = siblings.findIndex((candidate) => sameTransition(candidate, transition));
  return edgeId(source.id, event.key, Math.max(index, 0));
}

export function edgeId(sourceId: string, eventKey: string, index: number): string {
  return `${sourceId}:${eventKey}:${index}`;
}

function sameTransition(a: AnyTransitionDefinition, b: AnyTransitionDefinition): boolean {
  const targets = (t: AnyTransitionDefinition) => (t.target ?? []).map((node) => node.id).join(',');
  return targets(a) === targets(b) && JSON.stringify(a.guard ?? null) === JSON.stringify(b.guard ?? null);
}
