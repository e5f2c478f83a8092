import { createServer, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../../src/domain/errors.js';
import { openPostgresPool } from '../../../src/store/postgres/pool.js';
import { freshPostgresDatabase } from '../../support/postgres-database.js';

/**
 * The pool every PostgreSQL store uses: no JIT, int8 read as numbers, and U+0000 (which PostgreSQL text
 * cannot hold) refused as the client's input — a ValidationError, so a 400 — in a text parameter
 * or inside JSON text, through the pool and through a checked-out client alike.
 */
const db = await freshPostgresDatabase();
const pool = openPostgresPool({ connectionString: db.url, max: 2 });
afterAll(async () => {
  await pool.end();
  await db.drop();
});

describe('the PostgreSQL pool', () => {
  it('runs without JIT: a short statement whose rows the planner overestimates is not compiled', async () => {
    // Measured: a workflow's usage read, estimated at 133 000 (jit_above_cost is 100 000), spent
    // 10 ms compiling to run in 0.2 ms.
    const { rows } = await pool.query('SHOW jit');
    expect(rows[0]).toEqual({ jit: 'off' });
  });

  it('reads BIGINT and numeric as numbers', async () => {
    const { rows } = await pool.query(
      'SELECT 1700000000000::bigint AS t, sum(x) AS s FROM (VALUES (2::bigint), (3)) v(x)',
    );
    expect(rows[0]).toEqual({ t: 1_700_000_000_000, s: 5 });
  });

  it('refuses U+0000 as a validation error, in parameters and in JSON, pooled or checked out', async () => {
    await expect(pool.query('SELECT $1::text AS v', ['a\u0000b'])).rejects.toBeInstanceOf(ValidationError);
    await expect(
      pool.query(`SELECT * FROM json_to_recordset($1) AS r (v text)`, [JSON.stringify([{ v: 'a\u0000b' }])]),
    ).rejects.toBeInstanceOf(ValidationError);
    const client = await pool.connect();
    try {
      await expect(client.query('SELECT $1::text AS v', ['\u0000'])).rejects.toBeInstanceOf(ValidationError);
      // The connection is still good afterwards.
      expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      client.release();
    }
    // Other errors pass through as they are.
    await expect(pool.query('SELECT 1/0')).rejects.toMatchObject({ code: '22012' });
  });

  it('gives up on a server that accepts and never answers, after the connect timeout', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const stuck = openPostgresPool({ connectionString: `postgres://u@127.0.0.1:${port}/db`, connectTimeoutMs: 200 });
    try {
      await expect(stuck.query('SELECT 1')).rejects.toThrow(/timeout/i);
    } finally {
      await stuck.end();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
