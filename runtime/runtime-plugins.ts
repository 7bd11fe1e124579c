/**
 * Step 4 of `createRuntime` (plugins): calling the plugins' run hooks, each isolated, and handing
 * the runtime to plugins that answer waiting runs (the inspector's forms).
 *
 * @module
 */

import type { Plugin, RunInfo } from '../plugins/define-plugin.ts';
import type { OnRuntimeError } from './runtime-options.ts';

/** The run hooks a plugin may have. */
type RunHook = 'onEvent' | 'onRunStart' | 'onStateChange';
const HOOKS: readonly RunHook[] = ['onEvent', 'onRunStart', 'onStateChange'];

/** The plugins' run hooks, as the runtime calls them. */
export interface PluginHooks {
  /** Plugins' `onRunStart` hooks, each isolated: a throw is reported and the run starts all the same. */
  notifyRunStart(info: RunInfo, how: 'start' | 'resume'): void;
  /** Calls `hook` on every plugin that has it; a throw is reported (`onError`) and the next goes on. */
  eachPlugin(hook: RunHook, call: (plugin: Plugin) => void): void;
  /** Whether some plugin has `hook` (the host skips work nobody listens to). */
  has(hook: RunHook): boolean;
}

/** The hooks of `plugins`, in plugin order, with throws reported to `onError`. */
export function pluginHooks(plugins: Plugin[], onError: OnRuntimeError): PluginHooks {
  function eachPlugin(hook: RunHook, call: (plugin: Plugin) => void): void {
    for (const plugin of plugins) {
      if (!plugin[hook]) continue;
      try {
        call(plugin);
      } catch (err) {
        onError(err, `plugin ${plugin.name} ${hook}`);
      }
    }
  }
  const present = new Set(plugins.flatMap((plugin) => HOOKS.filter((hook) => plugin[hook] !== undefined)));
  return {
    eachPlugin,
    has: (hook) => present.has(hook),
    notifyRunStart: (info, how) => eachPlugin('onRunStart', (plugin) => plugin.onRunStart?.(info, how)),
  };
}

/** Inspectors hosted here answer waiting runs through this runtime (the page's forms). */
export function connectAnswerers<Answers>(plugins: Plugin[], runtime: Answers): void {
  for (const plugin of plugins) (plugin as { answerWith?: (answers: Answers) => void }).answerWith?.(runtime);
}
