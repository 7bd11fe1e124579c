/**
 * What the SQL stores' schemas (`sqlite-schema.ts`, `postgres-schema.ts`) have in common: an
 * ordered list of migrations, each recorded by version once applied.
 *
 * @module
 */

/** One schema change. Applied in order; a released entry is never edited, a new one is appended. */
export interface Migration {
  version: number;
  description: string;
  /** The statements, run in order in the migrating transaction. */
  statements: string[];
}

/** The schema version `migrations` bring a database to: the last entry's. */
export function latestVersion(migrations: readonly Migration[]): number {
  return migrations[migrations.length - 1]!.version;
}

/**
 * The error for a database a newer toolwarden migrated (`current` > `latest`): this code cannot
 * read it. `where` names it, e.g. `the database` or `schema "toolwarden"`.
 */
export function newerSchemaError(where: string, current: number, latest: number): Error {
  return new Error(
    `${where} has run store schema version ${current}, newer than this toolwarden's ${latest}; upgrade toolwarden`,
  );
}
