/** See package-cost.mjs. */
export function packageCost(options?: { runs?: number; keep?: boolean }): void;
