/**
 * The public `createRuntime` (exported by `toolwarden`): the runtime's core
 * (runtime/create-runtime.ts) plus the options that wire rooms above it. Today that is one option,
 * `inspector`, sugar for `plugins: [inspectorPlugin(options)]` with forks on and the page's server
 * closed by `runtime.close()`. It lives here, on the entry points' floor, so that the runtime never
 * imports the inspector: the inspector attaches as the plugin it is (issue 37 item 4,
 * scripts/structure-rules.mjs).
 *
 * @module
 */

import {
  type InspectorPlugin,
  type InspectorPluginOptions,
  inspectorPlugin,
} from './inspector/inspector-plugin.ts';
import {
  type CoreRuntime,
  type CoreRuntimeOptions,
  createRuntime as createCoreRuntime,
} from './runtime/create-runtime.ts';

export type { InspectObserver, RuntimeListFilter, StartOptions } from './runtime/create-runtime.ts';

/** What `createRuntime` takes (docs/architecture.md): the core's options and `inspector`. */
export interface RuntimeOptions extends CoreRuntimeOptions {
  /**
   * Serve the live inspector page (docs/inspection.md): `true`, or `{ port }` and the other
   * `inspectorPlugin` options. Off by default, and then no inspection observer is installed.
   * The plugin runs after the app's plugins; `forks` defaults to on (the page forks runs). The
   * server's URL: `await runtime.inspector?.start()`; `runtime.close()` stops it.
   */
  inspector?: boolean | InspectorPluginOptions;
}

/** What {@link createRuntime} returns: the core runtime (docs/architecture.md) and its inspector. */
export interface Runtime extends CoreRuntime {
  /** The inspector plugin when the `inspector` option is set: `start()` gives its URL, `close()` stops it. */
  readonly inspector: InspectorPlugin | undefined;
}

/**
 * Creates the runtime that hosts runs (docs/architecture.md): one XState actor per run, persisted at every
 * step boundary in `store`, with events on `run.events$` and answers through the run handle; with
 * `inspector`, the live page as well.
 *
 * @throws ToolDefinitionError when two tools share an id; ZodError for invalid caps.
 */
export function createRuntime(options: RuntimeOptions): Runtime {
  const { inspector: wanted, ...core } = options;
  if (!wanted) return Object.assign(createCoreRuntime(core), { inspector: undefined });
  const inspector = inspectorPlugin(wanted === true ? {} : wanted);
  const runtime = createCoreRuntime({
    ...core,
    plugins: [...(core.plugins ?? []), inspector],
    forks: core.forks ?? true,
  });
  const closeCore = runtime.close;
  return Object.assign(runtime, {
    inspector,
    // The app's own inspector plugins stay open (they are the app's); this one the option made.
    async close(): Promise<void> {
      await closeCore();
      await inspector.close();
    },
  });
}
