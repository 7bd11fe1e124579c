/**
 * Where planner turns wait for their turn on the CPU, so that many runs cannot starve the event
 * loop (issue 12, defect 4: 10,000 runs whose planners answered at once stalled it for 17 s, and
 * lease renewals could not run).
 *
 * Every planner turn of every run in the process is queued here and started from a macrotask.
 * One macrotask starts a slice of queued turns; the work those turns set off (the planner's
 * answer, the machine's steps, validation, tool calls, up to the next turn) runs as microtasks
 * right after it. The slice size adapts so that a slice, microtasks included, takes about
 * {@link TARGET_SLICE_MS}: it halves when a slice ran long and doubles when it ran short.
 * Between slices the event loop runs its timers and I/O. Turns start in the order they were
 * queued.
 */

/** The time one slice of turns and the work it sets off should take, in ms. */
export const TARGET_SLICE_MS = 8;
const MIN_SLICE = 1;
const MAX_SLICE = 1024;

const queue: (() => void)[] = [];
let head = 0;
let sliceSize = 32;
let scheduled = false;
let sliceStartedAt = 0;
let sliceRan = 0;

const nextMacrotask: (fn: () => void) => void =
  typeof setImmediate === 'function' ? (fn) => void setImmediate(fn) : (fn) => void setTimeout(fn, 0);

/** Queues `turn` to start in a later macrotask; never runs it synchronously. */
export function scheduleTurn(turn: () => void): void {
  queue.push(turn);
  if (!scheduled) {
    scheduled = true;
    nextMacrotask(runSlice);
  }
}

function runSlice(): void {
  const now = performance.now();
  // The previous slice's cost, its microtasks included, is the time since it began, less what
  // the event loop spent waiting in between (bounded below by nothing: a busy loop only shrinks
  // the slice, which is the safe direction).
  if (sliceRan > 0) {
    const elapsed = now - sliceStartedAt;
    if (elapsed > TARGET_SLICE_MS * 2 && sliceSize > MIN_SLICE)
      sliceSize = Math.max(MIN_SLICE, sliceSize >> 1);
    else if (elapsed < TARGET_SLICE_MS / 2 && sliceRan === sliceSize && sliceSize < MAX_SLICE)
      sliceSize <<= 1;
  }
  sliceStartedAt = now;
  sliceRan = 0;
  while (head < queue.length && sliceRan < sliceSize) {
    const turn = queue[head]!;
    queue[head++] = noop;
    sliceRan++;
    try {
      turn();
    } catch {
      // A turn reports its own errors (it settles its step); one that throws here must not stop the others.
    }
  }
  if (head > 4096 && head * 2 > queue.length) {
    queue.splice(0, head);
    head = 0;
  }
  if (head < queue.length) nextMacrotask(runSlice);
  else {
    scheduled = false;
    queue.length = 0;
    head = 0;
  }
}

function noop(): void {}
