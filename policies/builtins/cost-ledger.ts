/**
 * A money ledger several runs draw on (docs/policies.md §Money): per key (a tenant, a team), what
 * was spent and what is reserved by turns in flight, in integer micro-units (10⁻⁶ of the
 * currency). `costBudget({ ledger: { store, key } })` reserves before each planner turn and
 * settles after it. Implementations: {@link memoryCostLedger} (one process), `sqliteCostLedger`
 * (`toolwarden/sqlite`) and `postgresCostLedger` (`toolwarden/postgres`), atomic across processes.
 *
 * | call | does, atomically |
 * | --- | --- |
 * | `reserve({ key, limit, holds, ttlMs })` | reclaims the key's expired reservations, then sets each hold's amount (an existing id is replaced, its expiry renewed) if `spent + reserved` stays ≤ `limit`; all holds or none |
 * | `settle(key, id, spent)` | ends reservation `id` and adds `spent` to the key's spent (even past the limit: it was spent) |
 * | `release(key, id)` | ends reservation `id`, spending nothing |
 * | `balance(key)` | the key's `spent` and live `reserved` |
 *
 * @module
 */

/** One reservation of {@link CostReservationRequest}: its id (unique per key) and amount, micro-units. */
export interface CostHold {
  id: string;
  amount: number;
}

/** What {@link CostLedger.reserve} is asked. */
export interface CostReservationRequest {
  key: string;
  /** The key's budget, micro-units: `spent + reserved` may not pass it. */
  limit: number;
  holds: CostHold[];
  /**
   * How long the holds stay reserved if nobody settles or releases them (a process that died
   * mid-turn), ms: then the next `reserve` of the key reclaims them.
   */
  ttlMs: number;
}

/** A key's account, micro-units. */
export interface CostBalance {
  spent: number;
  reserved: number;
}

/** Where shared budgets are kept (see the module's table). */
export interface CostLedger {
  /** @returns whether the holds were reserved (false: they would pass the limit; nothing changed). */
  reserve(request: CostReservationRequest): Promise<boolean>;
  settle(key: string, id: string, spent: number): Promise<void>;
  release(key: string, id: string): Promise<void>;
  balance(key: string): Promise<CostBalance>;
  close?(): Promise<void>;
}

/** Thrown for a ledger call with a bad argument: a key, id or amount the ledger cannot hold. */
export class CostLedgerInputError extends TypeError {
  override readonly name = 'CostLedgerInputError';
}

/** Checks what a ledger is asked before it touches its tables (every implementation calls it). */
export function checkReservation(request: CostReservationRequest): void {
  checkKey(request.key);
  checkMicros('limit', request.limit);
  if (!Number.isFinite(request.ttlMs) || request.ttlMs <= 0)
    throw new CostLedgerInputError(`ttlMs must be a positive number of ms, got ${request.ttlMs}`);
  if (!Array.isArray(request.holds) || request.holds.length === 0)
    throw new CostLedgerInputError('reserve needs at least one hold');
  const ids = new Set<string>();
  for (const hold of request.holds) {
    checkId(hold.id);
    checkMicros(`hold ${hold.id}`, hold.amount);
    if (ids.has(hold.id)) throw new CostLedgerInputError(`hold id ${hold.id} is given twice`);
    ids.add(hold.id);
  }
}

/** A key: 1–256 characters, no NUL (PostgreSQL text cannot hold it). */
export function checkKey(key: unknown): void {
  if (typeof key !== 'string' || key.length === 0 || key.length > 256 || key.includes('\u0000'))
    throw new CostLedgerInputError(
      `A ledger key is a string of 1 to 256 characters without NUL, got ${JSON.stringify(key)}`,
    );
}

/** A reservation id: 1–512 characters, no NUL. */
export function checkId(id: unknown): void {
  if (typeof id !== 'string' || id.length === 0 || id.length > 512 || id.includes('\u0000'))
    throw new CostLedgerInputError(
      `A reservation id is a string of 1 to 512 characters without NUL, got ${JSON.stringify(id)}`,
    );
}

/** An amount: an integer number of micro-units, ≥ 0, within 2⁵³. */
export function checkMicros(what: string, amount: unknown): void {
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 0)
    throw new CostLedgerInputError(
      `${what} must be a whole number of micro-units ≥ 0, got ${String(amount)}`,
    );
}

/** What an implementation does; {@link checkedLedger} checks every argument before these run. */
export interface CostLedgerSteps {
  reserve(request: CostReservationRequest): Promise<boolean>;
  /** Ends hold `id` of `key`, adding `spent` (0 for a release) to the key's spent. */
  end(key: string, id: string, spent: number): Promise<void>;
  balance(key: string): Promise<CostBalance>;
  close?(): Promise<void>;
}

/** A {@link CostLedger} over an implementation's steps, refusing bad input with CostLedgerInputError. */
export function checkedLedger(steps: CostLedgerSteps): CostLedger {
  const ledger: CostLedger = {
    async reserve(request) {
      checkReservation(request);
      return steps.reserve(request);
    },
    async settle(key, id, spent) {
      checkKey(key);
      checkId(id);
      checkMicros('spent', spent);
      await steps.end(key, id, spent);
    },
    async release(key, id) {
      checkKey(key);
      checkId(id);
      await steps.end(key, id, 0);
    },
    async balance(key) {
      checkKey(key);
      return steps.balance(key);
    },
  };
  if (steps.close) ledger.close = () => steps.close!();
  return ledger;
}

interface MemoryAccount {
  spent: number;
  holds: Map<string, { amount: number; expiresAt: number }>;
}

/**
 * A ledger in this process's memory: runs of one runtime (or several runtimes of one process)
 * share a budget; nothing survives the process. For budgets across processes use
 * `sqliteCostLedger` or `postgresCostLedger`.
 */
export function memoryCostLedger(): CostLedger {
  const accounts = new Map<string, MemoryAccount>();
  const account = (key: string): MemoryAccount => {
    const found = accounts.get(key);
    if (found) return found;
    const created: MemoryAccount = { spent: 0, holds: new Map() };
    accounts.set(key, created);
    return created;
  };
  const live = (entry: MemoryAccount, now: number): number => {
    let reserved = 0;
    for (const [id, hold] of entry.holds) {
      if (hold.expiresAt <= now) entry.holds.delete(id);
      else reserved += hold.amount;
    }
    return reserved;
  };
  return checkedLedger({
    async reserve(request) {
      const now = Date.now();
      const entry = account(request.key);
      const reserved = live(entry, now);
      let delta = 0;
      for (const hold of request.holds) delta += hold.amount - (entry.holds.get(hold.id)?.amount ?? 0);
      if (delta > 0 && entry.spent + reserved + delta > request.limit) return false;
      for (const hold of request.holds)
        entry.holds.set(hold.id, { amount: hold.amount, expiresAt: now + request.ttlMs });
      return true;
    },
    async end(key, id, spent) {
      const entry = account(key);
      entry.holds.delete(id);
      entry.spent += spent;
    },
    async balance(key) {
      const entry = accounts.get(key);
      if (!entry) return { spent: 0, reserved: 0 };
      return { spent: entry.spent, reserved: live(entry, Date.now()) };
    },
  });
}
