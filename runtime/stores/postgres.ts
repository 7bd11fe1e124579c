/**
 * `toolwarden/postgres`: the run store on PostgreSQL, for several processes or machines
 * (docs/durability.md). Needs the optional peer `pg` (loaded when the store first connects).
 *
 * @packageDocumentation
 */
export { POSTGRES_SCHEMA_VERSION, type PostgresStoreOptions, postgresStore } from './postgres-store.ts';
