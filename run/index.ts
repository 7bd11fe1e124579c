/**
 * The run's vocabulary: the shapes every layer above `tools/` speaks (the planner contract and
 * PlanResult, the await shapes, RunEvent, Caps, Message, the merged policy effects). It imports
 * only `tools/` and zod, so the layout reads bottom-up: tools and run → machines → policies and
 * plugins → runtime → integrations → cli and the eval.
 */
export * from './caps.ts';
export * from './finalize-notice.ts';
export * from './message.ts';
export * from './planner.ts';
export * from './policy-effects.ts';
export * from './run-events.ts';
