import pg from 'pg';

/**
 * The one way baton opens PostgreSQL. Times, counts and sequence numbers are BIGINT, which `pg`
 * hands back as strings by default (an int8 may exceed 2^53); every value baton stores in one is an
 * epoch millisecond, a count or a seq, far below that, so this pool reads int8 and numeric as
 * numbers. The parsers are the pool's own, not pg's global table, so other users of `pg` in the
 * process are unaffected.
 */
const INT8 = 20;
const NUMERIC = 1700;

const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8 || oid === NUMERIC) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

export interface PostgresPoolOptions {
  connectionString: string;
  /** Connections this instance may hold (default 10). */
  max?: number;
  /** Tags the connections in pg_stat_activity (default `baton`). */
  applicationName?: string;
}

export function openPostgresPool(options: PostgresPoolOptions): pg.Pool {
  return new pg.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'baton',
    types,
  });
}
