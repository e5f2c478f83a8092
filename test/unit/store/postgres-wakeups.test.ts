import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresPool } from '../../../src/store/postgres/pool.js';
import { createWakeups, type Wakeups } from '../../../src/store/postgres/wakeups.js';
import { freshPostgresDatabase } from '../../support/postgres-database.js';

/**
 * LISTEN/NOTIFY wake-ups on a real PostgreSQL: a notification from one instance reaches every
 * instance listening (three here), in the order sent; unsubscribed handlers hear nothing; and when
 * the listening connection is killed the instance reconnects, listens again and says so, so the
 * next notification arrives.
 */
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

let url: string;
let pool: pg.Pool;
beforeAll(async () => {
  const db = await freshPostgresDatabase();
  url = db.url;
  const opened = openPostgresPool({ connectionString: url, max: 4 });
  pool = opened;
  cleanups.push(db.drop, () => opened.end());
});

function instance(onReconnect?: () => void, on = { pool, url }): Wakeups {
  const wakeups = createWakeups(on.pool, { connectionString: on.url, onReconnect, retryMs: 20 });
  cleanups.push(() => wakeups.close());
  return wakeups;
}

/** Resolves with the first `count` payloads a handler receives. */
function collect(count: number): { handler: (p: string) => void; done: Promise<string[]> } {
  const got: string[] = [];
  let resolve!: (v: string[]) => void;
  const done = new Promise<string[]>((r) => {
    resolve = r;
  });
  return {
    handler: (p) => {
      got.push(p);
      if (got.length === count) resolve(got);
    },
    done,
  };
}

describe('PostgreSQL wake-ups', () => {
  it('reach every listening instance, in the order sent', async () => {
    const listeners = [instance(), instance(), instance()];
    const received = listeners.map(() => collect(3));
    await Promise.all(
      listeners.map((l, i) => l.subscribe('runs_ready', (received[i] as ReturnType<typeof collect>).handler)),
    );
    const sender = instance();
    for (const payload of ['a', 'b', 'c']) await sender.notify('runs_ready', payload);
    for (const r of received) expect(await r.done).toEqual(['a', 'b', 'c']);
  });

  it('stop reaching a handler once it unsubscribes', async () => {
    const listener = instance();
    const heard: string[] = [];
    const stop = await listener.subscribe('runs_cancelled', (p) => heard.push(p));
    const after = collect(1);
    await listener.subscribe('runs_cancelled', after.handler);
    stop();
    await instance().notify('runs_cancelled', 'x');
    expect(await after.done).toEqual(['x']);
    expect(heard).toEqual([]);
  });

  it('listen again after the connection is killed, and say so', async () => {
    // A database of its own: the kill below must reach this listener's backend and no other.
    const db = await freshPostgresDatabase();
    const own = { url: db.url, pool: openPostgresPool({ connectionString: db.url, max: 2 }) };
    cleanups.push(db.drop, () => own.pool.end());
    let reconnected!: () => void;
    const back = new Promise<void>((r) => {
      reconnected = r;
    });
    const listener = instance(() => reconnected(), own);
    const first = collect(1);
    let handler = first.handler;
    await listener.subscribe('events_committed', (p) => handler(p));
    await own.pool.query('SELECT pg_notify($1, $2)', ['events_committed', 'before']);
    expect(await first.done).toEqual(['before']);

    const killed = await own.pool.query<{ n: number }>(
      `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN%'`,
    );
    expect(killed.rows[0]?.n).toBe(1);
    await back;
    const second = collect(1);
    handler = second.handler;
    await instance(undefined, own).notify('events_committed', 'after');
    expect(await second.done).toEqual(['after']);
  });

  it('refuse a channel name that is not a plain identifier', async () => {
    await expect(instance().subscribe('runs; DROP TABLE x', () => {})).rejects.toThrow(/not a channel name/);
    await expect(instance().notify('Bad-Name', 'x')).rejects.toThrow(/not a channel name/);
  });
});
