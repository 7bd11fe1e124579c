/**
 * `toolwarden/sqlite`: the embedded durable run store on a SQLite file (docs/durability.md).
 * Needs the optional peer `@libsql/client` (loaded when the store first opens).
 *
 * @packageDocumentation
 */
export { SQLITE_SCHEMA_VERSION, type SqliteStoreOptions, sqliteStore } from './sqlite-store.ts';
