/**
 * The options of the PostgreSQL run store (`postgres-store.ts`) and how its errors name the
 * database it connects to, password redacted.
 *
 * @module
 */

/**
 * A `pg` Pool as the store's options name it (`new Pool()` from `pg` is one). Declared here, not
 * imported from `pg`, so toolwarden's types need neither `pg` nor `@types/pg`: an app without
 * them type-checks with `skipLibCheck: false` (issue 28 item 7).
 */
export interface PgPool {
  // biome-ignore lint/suspicious/noExplicitAny: pg's overloads (text, config, callback) differ in every parameter.
  query(...args: any[]): Promise<unknown>;
  connect(): Promise<unknown>;
  end(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): unknown;
  /** Where it connects (read for error messages). */
  readonly options: {
    connectionString?: string | undefined;
    host?: string | undefined;
    port?: number | undefined;
    user?: string | undefined;
    database?: string | undefined;
  };
}

interface PostgresStoreCommonOptions {
  /** The schema holding the store's tables; created when absent. Default `toolwarden`. */
  schema?: string;
  /** Clock for `createdAt`/`updatedAt` and leases, epoch ms. Default `Date.now`. Processes sharing a
   * database must agree on it to well within their lease time. */
  now?: () => number;
}

/** Either a connection string (the store owns its pool) or a pool the caller owns. */
export type PostgresStoreOptions = PostgresStoreCommonOptions &
  (
    | {
        /** e.g. `postgres://user:password@host:5432/db`. */
        connectionString: string;
        /**
         * Extra pool settings: `pg`'s `PoolConfig` (typed `object` so toolwarden's types need no
         * `pg` types). Default `connectionTimeoutMillis` 10000, `max` 10.
         */
        poolConfig?: object;
        pool?: never;
      }
    | {
        /**
         * A `pg` Pool; `close()` leaves it open. Handle its `'error'` event yourself: an idle
         * client dropped by the server (restart, failover) emits it, and unhandled it crashes
         * the process.
         */
        pool: PgPool;
        connectionString?: never;
        poolConfig?: never;
      }
  );

/** Where the store connects, for error messages, with any password replaced by `***`. */
export function describeTarget(options: PostgresStoreOptions): string {
  const connectionString = options.connectionString ?? options.pool?.options.connectionString;
  if (connectionString !== undefined) return redactPassword(connectionString);
  const config = options.pool?.options;
  if (config?.host !== undefined) {
    return `postgres://${config.user ?? ''}${config.user === undefined ? '' : '@'}${config.host}:${config.port ?? 5432}/${config.database ?? ''}`;
  }
  return "the caller's pool";
}

export function redactPassword(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    if (url.password !== '') url.password = '***';
    if (url.searchParams.has('password')) url.searchParams.set('password', '***');
    return url.toString();
  } catch {
    // key=value form: host=... password=...
    return connectionString.replace(/password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)/gi, 'password=***');
  }
}
