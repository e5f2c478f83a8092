import type pg from 'pg';

/**
 * Runs `work` in one transaction on one pooled connection: committed when it resolves, rolled back
 * when it throws (the error passed on), the connection released either way — and destroyed when the
 * rollback itself fails, so a broken connection never goes back to the pool.
 */
export interface TransactionOptions {
  /** READ ONLY at REPEATABLE READ: every statement of `work` reads one snapshot. */
  readOnly?: boolean;
  /** SET LOCAL statement_timeout: the server cancels a statement still running after this. */
  statementTimeoutMs?: number;
}

export async function inTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    // One round trip: BEGIN and the SET travel as one simple query (the values are numbers we chose).
    const begin = options.readOnly === true ? 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' : 'BEGIN';
    const timeout = options.statementTimeoutMs;
    await client.query(
      timeout === undefined ? begin : `${begin}; SET LOCAL statement_timeout = ${Math.max(1, Math.floor(timeout))}`,
    );
    try {
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch((rollback: unknown) => {
        broken = rollback instanceof Error ? rollback : new Error(String(rollback));
      });
      throw err;
    }
  } finally {
    client.release(broken);
  }
}

/**
 * Reads in one snapshot on one connection: a report's several statements see the same rows, and a
 * report holds one of the pool's connections, never one per statement (the engine's commits share
 * the pool). pg runs the statements queued on one client one after the other.
 */
export function inSnapshot<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return inTransaction(pool, work, { readOnly: true });
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
