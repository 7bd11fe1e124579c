/** The longest delay `setTimeout` honours (2^31 − 1 ms); a longer one fires at once. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Calls `fire` once the clock reaches `deadline` (epoch ms), and returns a function that cancels
 * it. Deadlines are timestamps, not delays, so a run restored from a snapshot waits only for what
 * is left (docs/architecture.md); a deadline further than `setTimeout` can reach (~24.8 days) is re-armed in
 * steps instead of firing at once.
 */
export function waitUntil(deadline: number, fire: () => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      timer = undefined;
      fire();
      return;
    }
    timer = setTimeout(arm, Math.min(remaining, MAX_TIMER_MS));
  };
  arm();
  return () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
}
