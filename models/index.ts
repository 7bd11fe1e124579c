/**
 * `toolwarden/models`: any AI SDK 7, 6 or 5 language model (provider spec V4, V3, V2) as a run's
 * planner (docs/planners.md).
 * Needs `@ai-sdk/provider` (and the provider package of your model) installed: importing this entry
 * point without it throws `MissingPeerError` naming it.
 */
import { requireOptionalPeers } from '../run/optional-peers.ts';

requireOptionalPeers('toolwarden/models', { '@ai-sdk/provider': '^3.0.19 || ^4.0.0' });

export { type AnyLanguageModel, asLanguageModelV3 } from './language-model.ts';
export { llamaCppFetch } from './llama-cpp-fetch.ts';
export { ASK_USER_TOOL, ModelPlannerError, type ModelPlannerOptions, modelPlanner } from './model-planner.ts';
export { toModelPrompt } from './model-prompt.ts';
export type { LanguageModelV4Like } from './model-v4.ts';
export { type HintStyle, renderToolError } from './render-hint.ts';
export { PROVIDER_TOOL_NAME, type ToolNameMap, toolNameMap } from './tool-names.ts';
