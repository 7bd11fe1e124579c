/**
 * `toolwarden/postgres`: the run store on PostgreSQL, for several processes or machines
 * (docs/durability.md). Needs the optional peer `pg`: importing this entry point without it throws
 * `MissingPeerError` naming it (the driver itself is loaded when the store first connects).
 *
 * @packageDocumentation
 */
import { requireOptionalPeers } from '../run/optional-peers.ts';

requireOptionalPeers('toolwarden/postgres', { pg: '^8.23.1' });

export { type PostgresCostLedgerOptions, postgresCostLedger } from './postgres-cost-ledger.ts';
export { POSTGRES_SCHEMA_VERSION, type PostgresStoreOptions, postgresStore } from './postgres-store.ts';
