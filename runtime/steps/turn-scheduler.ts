/**
 * Where planner turns and store writes wait for their turn on the CPU, so that many runs cannot
 * starve the event loop (issue 12, defect 4: 10,000 runs whose planners answered at once stalled
 * it for 17 s, and lease renewals could not run; on SQLite, whose client writes synchronously,
 * their writes stalled it for 12.6 s).
 *
 * Work is queued here and started from a macrotask. One macrotask starts a slice of queued items;
 * the work those items set off (a planner's answer, the machine's steps, validation, tool calls,
 * a write) runs as microtasks right after it. The slice size adapts so that a slice, microtasks
 * included, takes about {@link TARGET_SLICE_MS}: it shrinks in proportion when a slice ran long
 * and doubles when it ran short. Between slices the event loop runs its timers and I/O. Items
 * start in the order they were queued.
 *
 * Planner turns and each store's writes have a scheduler of their own ({@link scheduleTurn},
 * {@link scheduleWrite}): their costs differ by orders of magnitude (a turn of a scripted planner,
 * a write to memory, a synchronous SQLite transaction), and a slice size learned from one must
 * not be applied to another.
 */

/** The time one slice and the work it sets off should take, in ms. */
export const TARGET_SLICE_MS = 8;
const MIN_SLICE = 1;

const nextMacrotask: (fn: () => void) => void =
  typeof setImmediate === 'function' ? (fn) => void setImmediate(fn) : (fn) => void setTimeout(fn, 0);

/** A queue of work started in adaptive slices, one slice per macrotask. */
class SliceScheduler {
  private readonly queue: (() => void)[] = [];
  private head = 0;
  private scheduled = false;
  private sliceStartedAt = 0;
  private sliceRan = 0;

  constructor(
    private sliceSize: number,
    private readonly maxSlice: number,
  ) {}

  /** Queues `work` to start in a later macrotask; never runs it synchronously. */
  schedule(work: () => void): void {
    this.queue.push(work);
    if (!this.scheduled) {
      this.scheduled = true;
      nextMacrotask(this.runSlice);
    }
  }

  private readonly runSlice = (): void => {
    const now = performance.now();
    // The previous slice's cost, its microtasks included, is the time since it began, less what
    // the event loop spent waiting in between (bounded below by nothing: a busy loop only shrinks
    // the slice, which is the safe direction).
    if (this.sliceRan > 0) {
      const elapsed = now - this.sliceStartedAt;
      if (elapsed > TARGET_SLICE_MS * 2) {
        this.sliceSize = Math.max(MIN_SLICE, Math.floor((this.sliceRan * TARGET_SLICE_MS) / elapsed));
      } else if (
        elapsed < TARGET_SLICE_MS / 2 &&
        this.sliceRan === this.sliceSize &&
        this.sliceSize < this.maxSlice
      ) {
        this.sliceSize <<= 1;
      }
    }
    this.sliceStartedAt = now;
    this.sliceRan = 0;
    const { queue } = this;
    while (this.head < queue.length && this.sliceRan < this.sliceSize) {
      const work = queue[this.head]!;
      queue[this.head++] = noop;
      this.sliceRan++;
      try {
        work();
      } catch {
        // An item reports its own errors (it settles its step); one that throws here must not stop the others.
      }
    }
    if (this.head > 4096 && this.head * 2 > queue.length) {
      queue.splice(0, this.head);
      this.head = 0;
    }
    if (this.head < queue.length) nextMacrotask(this.runSlice);
    else {
      this.scheduled = false;
      queue.length = 0;
      this.head = 0;
    }
  };
}

const turns = new SliceScheduler(32, 1024);
/** One per store: a memory store's writes and a SQLite file's differ by orders of magnitude too. */
const writes = new WeakMap<object, SliceScheduler>();

/** Queues a planner turn to start in a later macrotask; never runs it synchronously. */
export function scheduleTurn(turn: () => void): void {
  turns.schedule(turn);
}

/** Queues a write to `store` (a run persister's drain) to start in a later macrotask. */
export function scheduleWrite(store: object, write: () => void): void {
  let scheduler = writes.get(store);
  if (!scheduler) {
    scheduler = new SliceScheduler(8, 256);
    writes.set(store, scheduler);
  }
  scheduler.schedule(write);
}

function noop(): void {}
