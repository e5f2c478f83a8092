import pg from 'pg';
import { ValidationError } from '../../domain/errors.js';

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

/**
 * PostgreSQL text cannot hold U+0000, which SQLite (and JSON) can: a value with one fails the
 * statement with 22021 (a text parameter) or 22P05 (inside JSON text). That is the client's input,
 * not a fault of the service: it answers 400 naming the character, on every statement of every
 * store, instead of a 500. (The stores that can say which field it was check first.)
 */
const NUL_REFUSED = new Set(['22021', '22P05']);

function refuseNul(err: unknown): unknown {
  if (err instanceof Error && NUL_REFUSED.has((err as { code?: string }).code ?? '')) {
    return new ValidationError('text must not contain U+0000 (PostgreSQL text cannot hold it)', [
      { path: '', message: 'must not contain U+0000' },
    ]);
  }
  return err;
}

/** pg's client, with refuseNul on every query, in both of pg's calling styles (the pool uses callbacks). */
class NulRefusingClient extends pg.Client {
  // biome-ignore lint/suspicious/noExplicitAny: pg's query is overloaded past what a subclass can restate.
  override query(...args: any[]): any {
    const last = args.at(-1);
    if (typeof last === 'function') {
      args[args.length - 1] = (err: unknown, result: unknown) => last(err ? refuseNul(err) : err, result);
      // biome-ignore lint/suspicious/noExplicitAny: as above.
      return (super.query as any)(...args);
    }
    // biome-ignore lint/suspicious/noExplicitAny: as above.
    const result = (super.query as any)(...args);
    return typeof result?.then === 'function' ? result.catch((err: unknown) => Promise.reject(refuseNul(err))) : result;
  }
}

export interface PostgresPoolOptions {
  connectionString: string;
  /** Connections this instance may hold (default 10). */
  max?: number;
  /** Tags the connections in pg_stat_activity (default `baton`). */
  applicationName?: string;
  /**
   * How long opening a connection may take (default 10 s): a server that accepts and never answers
   * (a dead host behind a load balancer) fails the boot or the query instead of hanging it.
   */
  connectTimeoutMs?: number;
}

export function openPostgresPool(options: PostgresPoolOptions): pg.Pool {
  return new pg.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'baton',
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    // No JIT: baton's statements are short key lookups, and a planner that overestimates the rows
    // of one (a young table's statistics) compiled it for 10–30 ms, to run it in 0.2 ms.
    options: '-c jit=off',
    types,
    Client: NulRefusingClient,
  });
}
