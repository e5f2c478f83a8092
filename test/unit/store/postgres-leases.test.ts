import type pg from 'pg';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { createLeaseBook, type Lease, type LeaseBook } from '../../../src/store/postgres/leases.js';
import { migratePostgres } from '../../../src/store/postgres/migrate.js';
import { openPostgresPool } from '../../../src/store/postgres/pool.js';
import { freshPostgresDatabase } from '../../support/postgres-database.js';

/**
 * Leases on a real PostgreSQL (a database per case): claims go to the tenant with the fewest live
 * leases first and never past the per-tenant cap, even with instances claiming at once; a live
 * lease is never claimed twice; each claim raises the epoch; a heartbeat renews an instance's
 * leases in one statement and leaves out the ones it lost; the fence admits only writes at the
 * current epoch. Expiry is database time, so the cases move a lease's `lease_until` into the past
 * with SQL instead of waiting.
 */
const LEASE_MS = 60_000;
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

let pool: pg.Pool;
beforeEach(async () => {
  const db = await freshPostgresDatabase();
  const opened = openPostgresPool({ connectionString: db.url, max: 8 });
  cleanups.push(db.drop, () => opened.end());
  pool = opened;
  await migratePostgres(pool);
});

let created = 0;
/** Root workflows, created in call order (created_at follows it). */
async function roots(tenantId: string, count: number, status = 'idle'): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = `wf_${tenantId}_${String(++created).padStart(4, '0')}`;
    await pool.query(
      `INSERT INTO workflows (id, tenant_id, name, status, root_workflow_id, trace_id, definition, created_at)
       VALUES ($1, $2, 'w', $3, $1, 't', '{}', $4)`,
      [id, tenantId, status, created],
    );
    ids.push(id);
  }
  return ids;
}

const book = (owner: string, maxPerTenant = 100): LeaseBook =>
  createLeaseBook(pool, { owner, leaseMs: LEASE_MS, maxPerTenant });
const expire = (ids: readonly string[]) =>
  pool.query(`UPDATE workflows SET lease_until = now() - interval '1 second' WHERE id = ANY($1::text[])`, [ids]);
const leasesOf = async (b: LeaseBook, limit: number) => (await b.claim(limit)).leases;
const tenantsOf = (leases: readonly Lease[]) => leases.map((l) => l.tenantId);
/** The group commit's fence alone (migrations/postgres/0022, nothing to write): the roots it finds lost. */
async function lostUnder(client: pg.PoolClient, owner: string, leases: readonly Lease[]): Promise<string[]> {
  const { rows } = await client.query<{ lost: string[] }>(
    "SELECT baton_group_commit($1, $2, $3, '{}', '{}', '[]', 0, '[]', 0, NULL, '{}', '{}', NULL, '{}', '{}', '{}', '{}') AS lost",
    [owner, leases.map((l) => l.workflowId), leases.map((l) => l.epoch)],
  );
  return rows[0]?.lost ?? [];
}

describe('PostgreSQL leases', () => {
  it('claim the tenant with the fewest live leases first, oldest first within a tenant', async () => {
    const big = await roots('big', 6);
    await roots('small', 2);
    await roots('other', 1);
    const a = book('instance-a');
    const first = await leasesOf(a, 1);
    expect(first.map((l) => l.workflowId)).toEqual([big[0]]);
    // big now holds one live lease: the next claims interleave the others before its second.
    expect(tenantsOf(await leasesOf(a, 4))).toEqual(['small', 'other', 'big', 'small']);
  });

  it('take the roots a claim prefers first, never past a tenant cap', async () => {
    const [older, , mine] = await roots('t', 3);
    const [other] = await roots('u', 1);
    const a = book('instance-a', 2);
    // Its own submission before the older roots of every tenant, its tenant's third under a cap of two.
    const own = await a.claim(1, [mine as string]);
    expect(own.leases.map((l) => l.workflowId)).toEqual([mine]);
    // 't' holds one of its two places: the preferred one takes it, 'u' comes along (started first:
    // the fewer live leases), and the third root of 't' waits behind the cap.
    const b = book('instance-b', 2);
    const rest = await b.claim(3, [older as string, 'wf_t_missing']);
    expect(rest.leases.map((l) => l.workflowId)).toEqual([other, older]);
    expect(rest.waiting).toBe(1);
  });

  it('say how many claimable roots a claim left, past its limit or a tenant cap', async () => {
    await roots('t', 3);
    await roots('u', 3);
    const a = book('instance-a', 2);
    expect(await a.claim(1)).toMatchObject({ leases: [{ tenantId: 't' }], waiting: 5 });
    // Room for ten, but each tenant may hold two: one root of each waits behind its cap.
    expect(await a.claim(10)).toMatchObject({ leases: { length: 3 }, waiting: 2 });
    expect(await a.claim(10)).toEqual({ leases: [], waiting: 2 });
  });

  it('never hold more than the per-tenant cap across instances claiming at once', async () => {
    await roots('flood', 40);
    await roots('quiet', 3);
    const books = ['a', 'b', 'c'].map((o) => book(`instance-${o}`, 5));
    const claimed = (await Promise.all(books.map((b) => leasesOf(b, 20)))).flat();
    const byTenant = new Map<string, number>();
    for (const l of claimed) byTenant.set(l.tenantId, (byTenant.get(l.tenantId) ?? 0) + 1);
    expect(byTenant.get('flood')).toBe(5);
    expect(byTenant.get('quiet')).toBe(3);
    expect(new Set(claimed.map((l) => l.workflowId)).size).toBe(claimed.length);
    const live = await pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM workflows WHERE tenant_id = 'flood' AND lease_until > now()",
    );
    expect(live.rows[0]?.n).toBe(5);
  });

  it('never claim a live lease twice, and claim only roots still to run', async () => {
    const [id] = await roots('t', 1);
    await roots('t', 1, 'completed');
    await pool.query(
      `INSERT INTO workflows (id, tenant_id, name, status, parent_workflow_id, root_workflow_id, trace_id, definition, created_at)
       VALUES ('wf_child', 't', 'c', 'idle', $1, $1, 't', '{}', 0)`,
      [id],
    );
    const a = book('instance-a');
    const b = book('instance-b');
    expect((await leasesOf(a, 10)).map((l) => l.workflowId)).toEqual([id]);
    expect(await leasesOf(b, 10)).toEqual([]);
  });

  it('raise the epoch at every claim; the old holder is fenced out and its heartbeat loses the run', async () => {
    const [id] = await roots('t', 1);
    const a = book('instance-a');
    const b = book('instance-b');
    const [held] = await leasesOf(a, 1);
    expect(held).toMatchObject({ epoch: 1, untouched: true });
    await expire([id as string]);
    const [taken] = await leasesOf(b, 1);
    // Claimed before: whatever a ran of it is in the row, not in b's memory.
    expect(taken).toEqual({ workflowId: id, tenantId: 't', epoch: 2, untouched: false });

    expect(await a.heartbeat()).toEqual(new Set());
    expect(await b.heartbeat()).toEqual(new Set([id]));
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      expect(await lostUnder(client, 'instance-a', [held as Lease])).toEqual([id]);
      expect(await lostUnder(client, 'instance-b', [taken as Lease])).toEqual([]);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    expect(await a.release(held as Lease)).toBe(false);
    expect(await b.release(taken as Lease)).toBe(true);
  });

  it('call a first claim untouched only on a row still idle and not cancelled', async () => {
    const [fresh, cancelled, started] = await roots('t', 3);
    await pool.query('UPDATE workflows SET cancel_requested = 1 WHERE id = $1', [cancelled]);
    await pool.query("UPDATE workflows SET status = 'running' WHERE id = $1", [started]);
    const claimed = await leasesOf(book('instance-a'), 3);
    expect(Object.fromEntries(claimed.map((l) => [l.workflowId, [l.epoch, l.untouched]]))).toEqual({
      [fresh as string]: [1, true],
      [cancelled as string]: [1, false],
      [started as string]: [1, false],
    });
  });

  it('renew every lease of an instance in one heartbeat, and reap the expired ones of a silent one', async () => {
    await roots('t', 3);
    const a = book('instance-a');
    const silent = book('instance-silent');
    const mine = await leasesOf(a, 2);
    const theirs = await leasesOf(silent, 1);
    await expire([...mine, ...theirs].map((l) => l.workflowId));
    expect(await a.heartbeat()).toEqual(new Set(mine.map((l) => l.workflowId)));
    expect(await a.reap()).toEqual(theirs.map((l) => l.workflowId));
    expect(await silent.heartbeat()).toEqual(new Set());
    expect((await leasesOf(book('instance-c'), 5)).map((l) => l.workflowId)).toEqual(theirs.map((l) => l.workflowId));
  });

  it('hold a claim back while a fenced write of the same run is in flight', async () => {
    const [id] = await roots('t', 1);
    const a = book('instance-a');
    const [held] = await leasesOf(a, 1);
    await expire([id as string]);
    const writer = await pool.connect();
    try {
      await writer.query('BEGIN');
      expect(await lostUnder(writer, 'instance-a', [held as Lease])).toEqual([]);
      // The lease is past its time, but the write holds the row: a claim skips it, not steals it.
      expect(await leasesOf(book('instance-b'), 1)).toEqual([]);
      await writer.query('COMMIT');
    } finally {
      writer.release();
    }
    expect((await leasesOf(book('instance-b'), 1)).map((l) => l.epoch)).toEqual([2]);
  });
});

describe('PostgreSQL leases: waiting for a person', () => {
  const PENDING = JSON.stringify({ state: 'pending', reason: null, at: null });

  it('park a released root still waiting at its checkpoint, until a decision or a cancel', async () => {
    const [waiting, decided, cancelled] = await roots('t', 3);
    await pool.query('UPDATE workflows SET checkpoint = $1', [PENDING]);
    const a = book('instance-a');
    const leases = await leasesOf(a, 3);
    expect(leases).toHaveLength(3);
    for (const lease of leases) expect(await a.release(lease)).toBe(true);
    // Released while still pending: no one claims them again only to find them waiting.
    expect(await leasesOf(a, 3)).toEqual([]);
    expect(await a.claimOne(waiting as string)).toBeUndefined();

    await pool.query(`UPDATE workflows SET checkpoint = $1, parked = 0 WHERE id = $2`, [
      JSON.stringify({ state: 'approved', reason: null, at: 1 }),
      decided,
    ]);
    await pool.query('UPDATE workflows SET cancel_requested = 1, parked = 0 WHERE id = $1', [cancelled]);
    expect((await leasesOf(a, 3)).map((l) => l.workflowId).sort()).toEqual([decided, cancelled].sort());
  });

  it('leave unparked a root decided before its lease was given back', async () => {
    const [id] = await roots('t', 1);
    await pool.query('UPDATE workflows SET checkpoint = $1', [PENDING]);
    const a = book('instance-a');
    const [lease] = await leasesOf(a, 1);
    // The decision lands while the run that announced the wait still holds the lease.
    await pool.query('UPDATE workflows SET checkpoint = $1, parked = 0 WHERE id = $2', [
      JSON.stringify({ state: 'approved', reason: null, at: 1 }),
      id,
    ]);
    expect(await a.release(lease as Lease)).toBe(true);
    expect((await leasesOf(a, 1)).map((l) => [l.workflowId, l.epoch])).toEqual([[id, 2]]);
  });

  it('claim one given root at once, never one another instance holds live', async () => {
    const [mine, theirs] = await roots('t', 2);
    const a = book('instance-a', 1);
    const b = book('instance-b');
    expect((await b.claimOne(theirs as string))?.epoch).toBe(1);
    expect(await a.claimOne(theirs as string)).toBeUndefined();
    // Outside the tenant cap: a cancel is settled by whoever received it.
    expect((await a.claimOne(mine as string))?.workflowId).toBe(mine);
  });
});
