import type pg from 'pg';
import type { Tx } from './analytics-writes.js';

/**
 * `work` in a transaction on a connection of its own: COMMIT when it resolves, ROLLBACK when it
 * throws (the error goes on). For the conditional writes outside the group commit (feedback, the
 * agent registry), which must see and lock what they decide on.
 */
export async function inTransaction<T>(pool: pg.Pool, work: (tx: Tx) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/**
 * Reads in one snapshot on one connection: a report's several statements see the same rows, and a
 * report holds one of the pool's connections, never one per statement (the engine's commits share
 * the pool). pg runs the statements queued on one client one after the other.
 */
export async function inSnapshot<T>(pool: pg.Pool, work: (tx: Tx) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/**
 * A time bound as a BIGINT parameter that selects the same rows SQLite's comparison with the
 * number itself does: the stored times are integers, so `t >= x` is `t >= ceil(x)`, `t <= x` is
 * `t <= floor(x)` and `t < x` is `t < ceil(x)`; anything past ±2^53 selects what ±2^53 does
 * (every stored time is far inside), where PostgreSQL would refuse it as out of range. NaN, which
 * SQLite binds as NULL (no row matches), stays NULL.
 */
export function timeBound(value: number, compare: '>=' | '<=' | '<'): number | null {
  if (Number.isNaN(value)) return null;
  const whole = compare === '<=' ? Math.floor(value) : Math.ceil(value);
  return Math.min(Number.MAX_SAFE_INTEGER, Math.max(-Number.MAX_SAFE_INTEGER, whole));
}
