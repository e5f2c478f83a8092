import type pg from 'pg';
import { RESUME_TASK } from './background-jobs.js';
import { prepared } from './prepared.js';

/** Work notices: a root became claimable (its payload: the sender, which ignores its own). */
export const WORK_CHANNEL = 'baton_work';

/**
 * Run ownership over PostgreSQL (migrations/postgres/0002_leases.sql): an instance runs a root
 * workflow only while it holds the row's lease, and every write it makes for the run carries the
 * epoch of its claim, so an instance that lost the lease (paused, partitioned, presumed dead) has
 * its late writes refused. Database time only: `now()` decides expiry, never an instance's clock.
 */
export interface Lease {
  workflowId: string;
  tenantId: string;
  epoch: number;
  /** The root's first lease, on a row still idle and not cancelled: nothing has run it yet. */
  untouched: boolean;
}

export interface LeaseBookOptions {
  /** This instance's id: unique per process start, so a restarted instance never renews old leases. */
  owner: string;
  leaseMs: number;
  /** Live leases one tenant may hold across every instance (MAX_RUNNING_WORKFLOWS_PER_TENANT). */
  maxPerTenant: number;
}

/**
 * A root workflow still to run whose lease is free or past its time, as alias `w` of the query;
 * the claim (baton_claim, migrations/postgres/0023) spells the same predicate out.
 */
const claimable = (w: string) => `${w}.parent_workflow_id IS NULL AND ${w}.status IN ('idle', 'running')
     AND ${w}.parked = 0 AND (${w}.lease_owner IS NULL OR ${w}.lease_until <= now())`;

/**
 * Whether a released root waits for a person (migrations/postgres/0005): decided in the release's
 * own UPDATE, under the row lock a decision or a cancel also takes, so neither is ever missed.
 */
const WAITS_FOR_DECISION = `(status = 'idle' AND cancel_requested = 0 AND checkpoint IS NOT NULL
     AND (checkpoint::json ->> 'state') = 'pending')`;

/** baton_claim's one row (migrations/postgres/0023); BIGINTs come back from pg as strings. */
interface ClaimRow {
  ids: string[];
  tenant_ids: string[];
  epochs: string[];
  afters: string[];
  created: string[];
  untouched: boolean[];
  waiting: string;
}

export interface Claimed {
  /** In start order. */
  leases: Lease[];
  /** Claimable roots the claim left (past its limit or a tenant's cap): 0 when it took them all. */
  waiting: number;
}

export interface LeaseBook {
  /** `prefer`: roots to take first when they are claimable (this instance's own submissions). */
  claim(limit: number, prefer?: readonly string[]): Promise<Claimed>;
  /**
   * Claims one given root now, outside the tenant cap (a cancel settled on the instance that took
   * it); undefined when another instance holds it live or it is not to run.
   */
  claimOne(workflowId: string): Promise<Lease | undefined>;
  /**
   * Renews every lease this instance still holds, in one statement; returns the ids renewed. A run
   * this instance believes it holds but whose id is missing has lost its lease.
   */
  heartbeat(): Promise<Set<string>>;
  /**
   * Gives a run up (it ended, or waits for a person: then it is parked) and, in the same statement,
   * sends a work notice on WORK_CHANNEL; false when the lease was already lost (and nothing sent).
   * With `resumeAt` (epoch ms) the run waits until then: it is parked, and in the same statement a
   * background job (background-jobs.ts) is queued to unpark it at that time (no notice).
   */
  release(lease: Lease, resumeAt?: number): Promise<boolean>;
  /** Clears leases past their time (any owner); returns the ids, for the wake-up and the metrics. */
  reap(): Promise<string[]>;
}

export function createLeaseBook(pool: pg.Pool, options: LeaseBookOptions): LeaseBook {
  const { owner, leaseMs, maxPerTenant } = options;
  return {
    async claim(limit, prefer = []) {
      if (limit <= 0) return { leases: [], waiting: 0 };
      // One round trip: the function takes the claims' advisory lock, then claims
      // (migrations/postgres/0023 says how the per-tenant cap holds across instances, 0026 how
      // `prefer` orders the claim).
      const { rows } = await pool.query<ClaimRow>({
        name: 'baton_claim',
        text: 'SELECT ids, tenant_ids, epochs, afters, created, untouched, waiting FROM baton_claim($1, $2, $3, $4, $5)',
        values: [owner, limit, maxPerTenant, leaseMs, prefer],
      });
      const row = rows[0] as ClaimRow;
      const claimed = row.ids.map((id, i) => ({
        lease: {
          workflowId: id,
          tenantId: row.tenant_ids[i] as string,
          epoch: Number(row.epochs[i]),
          untouched: row.untouched[i] === true,
        },
        after: Number(row.afters[i]),
        created: Number(row.created[i]),
      }));
      // The claim's order is the start order.
      claimed.sort(
        (x, y) => x.after - y.after || x.created - y.created || (x.lease.workflowId < y.lease.workflowId ? -1 : 1),
      );
      return { leases: claimed.map((c) => c.lease), waiting: Number(row.waiting) };
    },

    async claimOne(workflowId) {
      const { rows } = await pool.query<{ id: string; tenant_id: string; lease_epoch: string }>(
        prepared(
          `UPDATE workflows w
            SET lease_owner = $1, lease_epoch = w.lease_epoch + 1,
                lease_until = now() + $3 * interval '1 millisecond'
          WHERE w.id = (SELECT c.id FROM workflows c WHERE c.id = $2 AND ${claimable('c')} FOR UPDATE SKIP LOCKED)
          RETURNING w.id, w.tenant_id, w.lease_epoch`,
          [owner, workflowId, leaseMs],
        ),
      );
      const row = rows[0];
      return row && { workflowId: row.id, tenantId: row.tenant_id, epoch: Number(row.lease_epoch), untouched: false };
    },

    async heartbeat() {
      // A lease past its time that no one took (nor reaped) is still this instance's: the epoch,
      // not the clock, is what fences a write, so a late heartbeat costs nothing when no one waited.
      const { rows } = await pool.query<{ id: string }>(
        prepared(
          `UPDATE workflows SET lease_until = now() + $2 * interval '1 millisecond'
            WHERE lease_owner = $1 RETURNING id`,
          [owner, leaseMs],
        ),
      );
      return new Set(rows.map((r) => r.id));
    },

    async release(lease, resumeAt) {
      if (resumeAt !== undefined) {
        const { rowCount } = await pool.query(
          prepared(
            `WITH released AS (
             UPDATE workflows SET lease_owner = NULL, lease_until = NULL, parked = 1
              WHERE id = $1 AND lease_owner = $2 AND lease_epoch = $3 RETURNING id
           )
           SELECT graphile_worker.add_job($4, json_build_object('workflowId', id),
                    run_at := to_timestamp($5::double precision / 1000), max_attempts := 5,
                    job_key := 'resume:' || id)
             FROM released`,
            [lease.workflowId, owner, lease.epoch, RESUME_TASK, resumeAt],
          ),
        );
        return rowCount === 1;
      }
      // The work notice rides on the release (delivered with its COMMIT): one round trip, not two.
      const { rowCount } = await pool.query(
        prepared(
          `WITH released AS (
           UPDATE workflows SET lease_owner = NULL, lease_until = NULL,
                  parked = CASE WHEN ${WAITS_FOR_DECISION} THEN 1 ELSE 0 END
            WHERE id = $1 AND lease_owner = $2 AND lease_epoch = $3 RETURNING id
         )
         SELECT pg_notify($4, $2) FROM released`,
          [lease.workflowId, owner, lease.epoch, WORK_CHANNEL],
        ),
      );
      return rowCount === 1;
    },

    async reap() {
      const { rows } = await pool.query<{ id: string }>(
        prepared(
          `UPDATE workflows SET lease_owner = NULL, lease_until = NULL
            WHERE lease_owner IS NOT NULL AND lease_until <= now() RETURNING id`,
          [],
        ),
      );
      return rows.map((r) => r.id);
    },
  };
}
