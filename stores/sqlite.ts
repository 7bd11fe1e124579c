/**
 * `toolwarden/sqlite`: the embedded durable run store on a SQLite file (docs/durability.md).
 * Needs the optional peer `libsql` (prebuilt binaries, no install script): importing this entry
 * point without it throws `MissingPeerError` naming it (the binary is loaded when the store first opens).
 *
 * @packageDocumentation
 */
import { requireOptionalPeers } from '../run/optional-peers.ts';

requireOptionalPeers('toolwarden/sqlite', { libsql: '^0.5.29' });

export { type SqliteCostLedgerOptions, sqliteCostLedger } from './sqlite-cost-ledger.ts';
export { SQLITE_SCHEMA_VERSION, type SqliteStoreOptions, sqliteStore } from './sqlite-store.ts';
