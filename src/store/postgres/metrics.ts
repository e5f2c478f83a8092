import type pg from 'pg';
import type { EfficiencyRecord, EfficiencySums, RewardRecord, RewardSums } from '../../domain/metrics.js';
import type { MetricsFilter, MetricsStore, Page } from '../../domain/ports.js';
import { decodeKeyset, encodeKeyset } from '../keyset.js';
import {
  checkLimit,
  type EfficiencyRow,
  METRICS_FILTERS,
  ms,
  REWARD_COLUMNS,
  type RewardRow,
  rangeOf,
  toActions,
  toRecord,
  toReward,
} from '../metrics-rows.js';
import type { Tx } from './analytics-writes.js';
import { inTransaction, timeBound } from './transaction.js';

/**
 * Efficiency records, rewards and feedback on PostgreSQL (migrations/postgres/0003; rows:
 * ../metrics-rows.ts), answering as the SQLite store does. Records and rewards are written by the
 * workflow store's commit (analytics-writes.ts); feedback here, in a transaction of its own that
 * locks the reward row first, so concurrent feedback on one workflow is applied one after the
 * other and each recomputation sees every action before it. Text is compared and ordered
 * `COLLATE "C"` (bytewise, as SQLite's BINARY): cursors and ties then agree with SQLite's whatever
 * the database's locale.
 */

/** The WHERE clause and parameters of a tenant's filtered window, parameters from `$1`. */
function windowOf(tenantId: string, filter: MetricsFilter): { where: string; params: unknown[] } {
  const params: unknown[] = [tenantId];
  const conditions = ['tenant_id = $1'];
  for (const [key, column, op] of METRICS_FILTERS) {
    const value = filter[key];
    if (value === undefined) continue;
    params.push(typeof value === 'number' ? timeBound(value, op as '>=' | '<=') : value);
    conditions.push(`${column} ${op} $${params.length}`);
  }
  return { where: conditions.join(' AND '), params };
}

async function selectReward(
  tx: Tx,
  tenantId: string,
  workflowId: string,
  lock = false,
): Promise<RewardRow | undefined> {
  const { rows } = await tx.query<RewardRow>(
    `SELECT ${REWARD_COLUMNS} FROM rewards WHERE workflow_id = $1 AND tenant_id = $2${lock ? ' FOR UPDATE' : ''}`,
    [workflowId, tenantId],
  );
  return rows[0];
}

export function createPostgresMetricsStore(pool: pg.Pool): MetricsStore {
  /** Newest first, ties by workflow id; the cursor is the sort key of the previous page's last row. */
  async function page<Row extends { created_at: number; workflow_id: string }>(
    table: 'efficiency' | 'rewards',
    tenantId: string,
    filter: MetricsFilter,
    cursor: string | null,
    limit: number,
  ): Promise<{ rows: Row[]; nextCursor: string | null }> {
    checkLimit(limit);
    const { where, params } = windowOf(tenantId, filter);
    let condition = where;
    if (cursor !== null) {
      const [at, id] = decodeKeyset(cursor, ['number', 'string']);
      params.push(at, id);
      condition += ` AND (created_at, workflow_id COLLATE "C") < ($${params.length - 1}, $${params.length})`;
    }
    params.push(limit + 1);
    const columns = table === 'efficiency' ? 'record, workflow_id, created_at' : REWARD_COLUMNS;
    // One extra row tells whether another page exists without a count query.
    const { rows } = await pool.query<Row>(
      `SELECT ${columns} FROM ${table} WHERE ${condition}
        ORDER BY created_at DESC, workflow_id COLLATE "C" DESC LIMIT $${params.length}`,
      params,
    );
    const more = rows.length > limit;
    const kept = more ? rows.slice(0, limit) : rows;
    const last = kept.at(-1);
    return { rows: kept, nextCursor: more && last ? encodeKeyset([last.created_at, last.workflow_id]) : null };
  }

  return {
    async efficiency(tenantId, workflowId) {
      const { rows } = await pool.query<EfficiencyRow>(
        'SELECT record FROM efficiency WHERE workflow_id = $1 AND tenant_id = $2',
        [workflowId, tenantId],
      );
      return rows[0] === undefined ? undefined : toRecord(rows[0]);
    },

    async listEfficiency(tenantId, filter, cursor, limit): Promise<Page<EfficiencyRecord>> {
      const { rows, nextCursor } = await page<EfficiencyRow>('efficiency', tenantId, filter, cursor, limit);
      return { items: rows.map(toRecord), nextCursor };
    },

    async efficiencySums(tenantId, filter) {
      const { where, params } = windowOf(tenantId, filter);
      const { rows } = await pool.query<EfficiencySums & { task_type: string }>(
        `SELECT task_type, count(*) AS count, sum(efficiency_score) AS efficiency_score,
                sum(wall_time_seconds) AS wall_time_seconds, count(*) FILTER (WHERE outcome = 'success') AS successes,
                sum(retry_count) AS retry_count, sum(cost_usd) AS cost_usd, sum(simulated_cost_usd) AS simulated_cost_usd
           FROM efficiency WHERE ${where} GROUP BY task_type ORDER BY task_type COLLATE "C"`,
        params,
      );
      const sums: Record<string, EfficiencySums> = {};
      for (const { task_type, ...row } of rows) sums[task_type] = row;
      return sums;
    },

    async reward(tenantId, workflowId) {
      const row = await selectReward(pool, tenantId, workflowId);
      return row === undefined ? undefined : toReward(row);
    },

    async listRewards(tenantId, filter, cursor, limit): Promise<Page<RewardRecord>> {
      const { rows, nextCursor } = await page<RewardRow>('rewards', tenantId, rangeOf(filter), cursor, limit);
      return { items: rows.map(toReward), nextCursor };
    },

    async rewardSums(tenantId, filter) {
      const { where, params } = windowOf(tenantId, rangeOf(filter));
      const { rows } = await pool.query<RewardSums>(
        `SELECT count(*) AS count, coalesce(sum(outcome_reward), 0) AS outcome,
                coalesce(sum(efficiency_reward), 0) AS efficiency, coalesce(sum(aggregate_reward), 0) AS aggregate,
                coalesce(sum(preference_reward), 0) AS preference, count(preference_reward) AS with_preference
           FROM rewards WHERE ${where}`,
        params,
      );
      return rows[0] as RewardSums;
    },

    async addFeedback(tenantId, workflowId, feedback, at, recompute) {
      return inTransaction(pool, async (tx) => {
        // The row lock queues concurrent feedback on this workflow behind this transaction.
        const row = await selectReward(tx, tenantId, workflowId, true);
        if (row === undefined) return undefined;
        await tx.query(
          'INSERT INTO feedback (workflow_id, tenant_id, actions, note, created_at) VALUES ($1, $2, $3, $4, $5)',
          [workflowId, tenantId, JSON.stringify(feedback.actions), feedback.note ?? null, at],
        );
        const { rows } = await tx.query<{ actions: string }>(
          'SELECT actions FROM feedback WHERE workflow_id = $1 AND tenant_id = $2 ORDER BY id',
          [workflowId, tenantId],
        );
        const next = recompute(
          rows.flatMap((r) => toActions(r.actions)),
          toReward(row),
        );
        await tx.query(
          `UPDATE rewards SET outcome_reward = $1, efficiency_reward = $2, preference_reward = $3, aggregate_reward = $4,
             updated_at = $5 WHERE workflow_id = $6 AND tenant_id = $7`,
          [
            next.outcome_reward,
            next.efficiency_reward,
            next.preference_reward,
            next.aggregate_reward,
            ms(next.updated_at),
            workflowId,
            tenantId,
          ],
        );
        return next;
      });
    },
  };
}
