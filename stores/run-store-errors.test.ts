import { describe, expect, it } from 'vitest';
import {
  RunLeasedError,
  RunStoreClosedError,
  RunStoreError,
  RunStoreUnavailableError,
  StaleRunVersionError,
} from './run-store-errors.ts';

describe('run store errors', () => {
  it('carry the versions of a stale write and say what to do', () => {
    const error = new StaleRunVersionError('run-1', 3, 4);
    expect(error).toBeInstanceOf(RunStoreError);
    expect(error).toMatchObject({
      name: 'StaleRunVersionError',
      runId: 'run-1',
      expectedVersion: 3,
      actualVersion: 4,
    });
    expect(error.message).toBe(
      'Run "run-1" is at version 4, not 3: another writer saved it first. Load the run again before saving ' +
        '(optimistic concurrency, docs/durability.md).',
    );
  });

  it('name the owner holding a leased run and until when', () => {
    const error = new RunLeasedError('run-1', 'pod-a', Date.UTC(2026, 0, 15, 9, 30, 30));
    expect(error).toBeInstanceOf(RunStoreError);
    expect(error).toMatchObject({ name: 'RunLeasedError', runId: 'run-1', owner: 'pod-a' });
    expect(error.message).toBe(
      'Run "run-1" is held by owner "pod-a", whose lease is live until 2026-01-15T09:30:30.000Z: only the ' +
        'holder can advance it (docs/durability.md).',
    );
  });

  it('say which store, which call and which cause made a store unavailable', () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const error = new RunStoreUnavailableError({
      store: 'postgres run store (db)',
      operation: 'save',
      runId: 'r',
      cause,
    });
    expect(error.message).toBe(
      'postgres run store (db) is unavailable: save("r") failed: connect ECONNREFUSED 127.0.0.1:5432',
    );
    expect(error).toMatchObject({ operation: 'save', runId: 'r', code: 'ECONNREFUSED', cause });
  });

  it('spell out an AggregateError with an empty message (Node, several addresses refused)', () => {
    const cause = new AggregateError([
      Object.assign(new Error('connect ECONNREFUSED ::1:1'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
    ]);
    const error = new RunStoreUnavailableError({
      store: 'postgres run store (db)',
      operation: 'list',
      cause,
    });
    expect(error.message).toBe(
      'postgres run store (db) is unavailable: list() failed: connect ECONNREFUSED ::1:1; connect ECONNREFUSED 127.0.0.1:1',
    );
  });

  it('name a closed store plainly', () => {
    const error = new RunStoreUnavailableError({
      store: 'memory run store',
      operation: 'load',
      runId: 'r',
      cause: new RunStoreClosedError(),
    });
    expect(error.message).toBe('memory run store is unavailable: load("r") failed: the store was closed');
  });
});
