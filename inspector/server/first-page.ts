import type { InspectionStore, RunPage } from '../inspection-store.ts';

/**
 * The first page of runs (the `hello`'s, and the one inlined in the page), smaller when its
 * summaries are large (long labels): it must fit half of `maxBufferedBytes`, the most a stream
 * queues before it is dropped (issue 27 item 1). Halves `pageSize` until it fits, down to one run.
 */
export function firstRunsPage(store: InspectionStore, pageSize: number, maxBufferedBytes: number): RunPage {
  for (let limit = pageSize; ; limit = Math.floor(limit / 2)) {
    const page = store.page({ limit: Math.max(1, limit) });
    if (limit <= 1 || JSON.stringify(page).length <= maxBufferedBytes / 2) return page;
  }
}

/** A `limit` query: a positive integer, at most 1,000 (the store's default maxLog); else undefined. */
export function logLimit(value: string | undefined): number | undefined {
  const limit = Number(value);
  return value && Number.isInteger(limit) && limit > 0 ? Math.min(limit, 1000) : undefined;
}
