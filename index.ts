/**
 * toolwarden's public API. See README.md and SPEC.md for the contract; each module's docstring
 * names the section it implements.
 */
export * from './machines/run-context.ts';
export {
  type RunActorRef,
  type RunMachine,
  type RunMachineEvent,
  runMachine,
} from './machines/run-machine.ts';
export * from './plugins/index.ts';
export * from './policies/index.ts';
export * from './runtime/caps.ts';
export * from './runtime/create-runtime.ts';
export * from './runtime/message.ts';
export * from './runtime/planner.ts';
export * from './runtime/run-events.ts';
export * from './runtime/run-handle.ts';
export * from './tools/index.ts';
