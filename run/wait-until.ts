/** The longest delay `setTimeout` honours (2^31 − 1 ms); a longer one fires at once. */
const MAX_TIMER_MS = 2_147_483_647;
/** Deadlines further than this are first waited for in multiples of {@link COARSE_MS}. */
const COARSE_FROM_MS = 2_000;
const COARSE_MS = 1_000;

/**
 * Calls `fire` once the clock reaches `deadline` (epoch ms), and returns a function that cancels
 * it. Deadlines are timestamps, not delays, so a run restored from a snapshot waits only for what
 * is left (docs/architecture.md); a deadline further than `setTimeout` can reach (~24.8 days) is re-armed in
 * steps instead of firing at once.
 */
export function waitUntil(deadline: number, fire: () => void): () => void {
  const wait = new DeadlineWait(deadline, fire);
  wait.arm();
  return () => wait.cancel();
}

/** One {@link waitUntil}: a class, so a wait makes no named closure (tsx names each, per call). */
class DeadlineWait {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deadline: number,
    private readonly fire: () => void,
  ) {}

  arm(): void {
    const remaining = this.deadline - Date.now();
    if (remaining <= 0) {
      this.timer = undefined;
      this.fire();
      return;
    }
    // A far deadline is first waited for in whole seconds, then the rest: Node keeps one list of
    // timers per delay, and a delay no other timer has costs a list made and queued, then
    // dropped (~0.35 µs more a wait; a planner turn's deadline is a new delay every turn).
    const delay = remaining > COARSE_FROM_MS ? remaining - (remaining % COARSE_MS) : remaining;
    this.timer = setTimeout(rearm, Math.min(delay, MAX_TIMER_MS), this);
  }

  cancel(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

function rearm(wait: DeadlineWait): void {
  wait.arm();
}
