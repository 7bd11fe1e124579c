/**
 * A run's facts as the list shows them (pure): when it started, how long it took, the tokens its
 * planner turns reported and their cost.
 */
import type { RunSummary } from '../inspection-store.ts';

const pad = (value: number) => String(value).padStart(2, '0');

/** `14:03:21` today; `Nov 28 14:03` another day (the browser's time zone). */
export function startText(startedAt: number, now: number): string {
  const at = new Date(startedAt);
  const time = `${pad(at.getHours())}:${pad(at.getMinutes())}`;
  if (at.toDateString() === new Date(now).toDateString()) return `${time}:${pad(at.getSeconds())}`;
  return `${at.toLocaleString('en-US', { month: 'short' })} ${at.getDate()} ${time}`;
}

/** `850 ms`, `3.2 s`, `4 min 12 s`, `1 h 3 min`. */
export function durationText(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}

/** `1,234 tok` (input and output together). */
export function tokensText(tokens: { input: number; output: number }): string {
  return `${(tokens.input + tokens.output).toLocaleString('en-US')} tok`;
}

/** `$0.0123` (an ISO currency), else `0.0123 credits`. */
export function costText(cost: { amount: number; currency: string }): string {
  try {
    return new Intl.NumberFormat('en-US', {
      style: 'currency',
      currency: cost.currency,
      maximumFractionDigits: 4,
    }).format(cost.amount);
  } catch {
    return `${cost.amount} ${cost.currency}`;
  }
}

/** The list's line of facts: start, duration (once ended), tokens, cost. */
export function runFacts(run: RunSummary, now: number): string {
  const facts = [startText(run.startedAt, now)];
  if (run.endedAt !== undefined) facts.push(durationText(run.endedAt - run.startedAt));
  if (run.tokens) facts.push(tokensText(run.tokens));
  if (run.cost) facts.push(costText(run.cost));
  return facts.join(' · ');
}
