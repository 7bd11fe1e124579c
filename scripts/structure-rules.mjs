// The house's floor plan (issue 37 item 5), read by scripts/check-structure.mjs.
//
// LAYERS lists the product's rooms from the bottom up. A file may import from its own room and from
// rooms on lower layers, never from a room on its own layer or above: the arrows point down, so any
// room can be read, tested and replaced knowing only what is below it. A room is a top-level folder,
// or a folder under runtime/ (runtime/ itself is the runtime's own files); the root files (index.ts,
// testing.ts) are the entry points on top. docs/architecture.md §Layers draws the same list.
//
// Exceptions are named here with their reason; the check prints them on every run.

/** Rooms from the bottom up; each inner list is one layer. */
export const LAYERS = [
  ['tools'], // the tool boundary: schemas, ToolError, RetryHint, ToolCallMeta
  ['run'], // a run's vocabulary: messages, planner port, caps, run events
  ['machines'], // the run machine (XState) and its pure actions
  ['policies'], // the policy engine and the built-in policies
  ['plugins'], // the plugin API (hooks around plans, calls, events)
  ['telemetry'], // the telemetry plugin (OpenTelemetry)
  ['stores', 'runtime/planners', 'runtime/steps'], // run stores; planners without a model; the steps' ports
  ['runtime'], // createRuntime's core: hosting runs, handles, forks
  ['inspector', 'models'], // the live page; AI SDK models as planners
  ['mcp', 'temporal'], // MCP toolsets and gateway; runs as Temporal workflows
  ['testing'], // toolwarden/testing: compare runs, trajectories, harnesses
  ['bfcl'], // the BFCL eval
  ['cli'], // the command line
  ['(root)'], // entry points: index.ts, testing.ts, the public createRuntime
];

/**
 * Folders that are, for now, part of another room (imports between them are inside one room), each
 * with its reason.
 */
export const SHARED_ROOMS = {
  'runtime/durable': {
    room: 'runtime',
    reason:
      'leases, persistence, eviction and recovery hold and make live RunHandles (run-handle.ts) and read the runtime options; an interface of what durable needs from a handle would make it a room below the runtime (left while issues 34 and 36 rework durable/)',
  },
};

/** Folders whose files are not product code (tests, benches, examples, docs, scripts). */
export const NOT_PRODUCT = [
  'test/',
  'bench/',
  'examples/',
  'docs/',
  'scripts/',
  'dist/',
  'node_modules/',
  '.ci/',
];

/** A product function (or method, or arrow) longer than this many lines is a violation. */
export const MAX_FUNCTION_LINES = 150;

/**
 * Known exceptions, each with its reason. `functions`: `{ file, name, reason }` (name as the check
 * prints it); `imports`: `{ from, to, reason }` (files, as repository paths).
 */
export const EXCEPTIONS = {
  functions: [],
  imports: [],
};
