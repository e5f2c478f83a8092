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
  /**
   * SET LOCAL enable_seqscan = off: for reads whose only bound is an index (a sequential scan would
   * read every tenant's rows when the planner misjudges a condition).
   */
  indexOnly?: boolean;
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
    const statements = [begin];
    if (timeout !== undefined) statements.push(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(timeout))}`);
    if (options.indexOnly === true) statements.push('SET LOCAL enable_seqscan = off');
    await client.query(statements.join('; '));
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
