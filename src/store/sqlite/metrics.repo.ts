import {
  type EfficiencyRecord,
  type EfficiencySums,
  type FeedbackAction,
  type RewardRecord,
  type RewardSums,
  recordCostUsd,
} from '../../domain/metrics.js';
import type { ChangeSet, MetricsFilter, MetricsStore, Page } from '../../domain/ports.js';
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
import type { Db } from './db.js';
import type { GroupCommitter } from './group-commit.js';

/**
 * The efficiency, rewards and feedback tables (migrations/sqlite/0006; rows: ../metrics-rows.ts).
 * Records and rewards are written by `apply`, inside the workflow store's `applyChanges`
 * transaction, so they commit with the workflow's final state or not at all; feedback goes through
 * the group committer.
 */

export interface MetricsRows {
  /**
   * Writes `changes.rewards` then `changes.efficiency` (both upserts by workflow id): in that order
   * the efficiency record's roll-up trigger (migrations/sqlite/0022) finds its reward and adds it to the
   * model figures in the same upsert, where a reward written after would add it in one more.
   */
  apply(changes: Pick<ChangeSet, 'efficiency' | 'rewards'>): void;
}

export function createMetricsRows(db: Db): MetricsRows {
  const upsertEfficiency = db.prepare(
    `INSERT INTO efficiency (workflow_id, tenant_id, task_type, complexity, outcome, created_at, record,
       efficiency_score, wall_time_seconds, retry_count, cost_usd, simulated_cost_usd)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (workflow_id) DO UPDATE SET task_type = excluded.task_type, complexity = excluded.complexity,
       outcome = excluded.outcome, created_at = excluded.created_at, record = excluded.record,
       efficiency_score = excluded.efficiency_score, wall_time_seconds = excluded.wall_time_seconds,
       retry_count = excluded.retry_count, cost_usd = excluded.cost_usd, simulated_cost_usd = excluded.simulated_cost_usd`,
  );
  const upsertReward = db.prepare(
    `INSERT INTO rewards (tenant_id, ${REWARD_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (workflow_id) DO UPDATE SET task_type = excluded.task_type, complexity = excluded.complexity,
       outcome_reward = excluded.outcome_reward, efficiency_reward = excluded.efficiency_reward,
       preference_reward = excluded.preference_reward, aggregate_reward = excluded.aggregate_reward,
       updated_at = excluded.updated_at`,
  );
  return {
    apply({ efficiency, rewards }) {
      for (const r of rewards ?? []) {
        upsertReward.run(
          r.tenant_id,
          r.workflow_id,
          r.task_type,
          r.complexity,
          r.outcome_reward,
          r.efficiency_reward,
          r.preference_reward,
          r.aggregate_reward,
          ms(r.created_at),
          ms(r.updated_at),
        );
      }
      for (const { tenant_id, ...record } of efficiency ?? []) {
        const cost = recordCostUsd(record);
        upsertEfficiency.run(
          record.task_id,
          tenant_id,
          record.task_type,
          record.complexity,
          record.outcome,
          ms(record.completed_at),
          JSON.stringify(record),
          record.efficiency_score,
          record.metrics.wall_time_seconds,
          record.metrics.retry_count,
          cost.real,
          cost.simulated,
        );
      }
    },
  };
}

export function createSqliteMetricsStore(db: Db, committer: GroupCommitter): MetricsStore {
  const selectEfficiency = db.prepare<[string, string], EfficiencyRow>(
    'SELECT record FROM efficiency WHERE workflow_id = ? AND tenant_id = ?',
  );
  const selectReward = db.prepare<[string, string], RewardRow>(
    `SELECT ${REWARD_COLUMNS} FROM rewards WHERE workflow_id = ? AND tenant_id = ?`,
  );
  const selectActions = db
    .prepare<[string, string], string>(
      'SELECT actions FROM feedback WHERE workflow_id = ? AND tenant_id = ? ORDER BY id',
    )
    .pluck();
  const insertFeedback = db.prepare(
    'INSERT INTO feedback (workflow_id, tenant_id, actions, note, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const updateReward = db.prepare(
    `UPDATE rewards SET outcome_reward = ?, efficiency_reward = ?, preference_reward = ?, aggregate_reward = ?,
       updated_at = ? WHERE workflow_id = ? AND tenant_id = ?`,
  );
  const statements = new Map<string, ReturnType<Db['prepare']>>();
  const prepared = (key: string, sql: () => string): ReturnType<Db['prepare']> => {
    let statement = statements.get(key);
    if (statement === undefined) {
      statement = db.prepare(sql());
      statements.set(key, statement);
    }
    return statement;
  };

  /** The WHERE clause and parameters of a tenant's filtered window; one prepared statement per shape. */
  function windowOf(tenantId: string, filter: MetricsFilter) {
    const present = METRICS_FILTERS.filter(([key]) => filter[key] !== undefined);
    return {
      shape: present.map(([k]) => k).join(','),
      where: ['tenant_id = ?', ...present.map(([, column, op]) => `${column} ${op} ?`)].join(' AND '),
      params: [tenantId, ...present.map(([k]) => filter[k])] as unknown[],
    };
  }

  /** Newest first, ties by workflow id; the cursor is the sort key of the previous page's last row. */
  function page<Row extends { created_at: number; workflow_id: string }>(
    table: 'efficiency' | 'rewards',
    tenantId: string,
    filter: MetricsFilter,
    cursor: string | null,
    limit: number,
  ): { rows: Row[]; nextCursor: string | null } {
    checkLimit(limit);
    const window = windowOf(tenantId, filter);
    const after = cursor === null ? [] : decodeKeyset(cursor, ['number', 'string']);
    const columns = table === 'efficiency' ? 'record, workflow_id, created_at' : REWARD_COLUMNS;
    const statement = prepared(`${table}:${window.shape}:${cursor !== null}`, () => {
      const where = cursor === null ? window.where : `${window.where} AND (created_at, workflow_id) < (?, ?)`;
      return `SELECT ${columns} FROM ${table} WHERE ${where} ORDER BY created_at DESC, workflow_id DESC LIMIT ?`;
    });
    // One extra row tells whether another page exists without a count query.
    const rows = statement.all([...window.params, ...after, limit + 1]) as Row[];
    const more = rows.length > limit;
    const kept = more ? rows.slice(0, limit) : rows;
    const last = kept.at(-1);
    return { rows: kept, nextCursor: more && last ? encodeKeyset([last.created_at, last.workflow_id]) : null };
  }

  const actionsOf = (tenantId: string, workflowId: string): FeedbackAction[] =>
    selectActions.all(workflowId, tenantId).flatMap(toActions);

  return {
    async efficiency(tenantId, workflowId) {
      const row = selectEfficiency.get(workflowId, tenantId);
      return row === undefined ? undefined : toRecord(row);
    },

    async listEfficiency(tenantId, filter, cursor, limit): Promise<Page<EfficiencyRecord>> {
      const { rows, nextCursor } = page<EfficiencyRow>('efficiency', tenantId, filter, cursor, limit);
      return { items: rows.map(toRecord), nextCursor };
    },

    async efficiencySums(tenantId, filter) {
      const window = windowOf(tenantId, filter);
      const statement = prepared(
        `efficiency-sums:${window.shape}`,
        () => `SELECT task_type, count(*) AS count, sum(efficiency_score) AS efficiency_score,
                 sum(wall_time_seconds) AS wall_time_seconds, sum(outcome = 'success') AS successes,
                 sum(retry_count) AS retry_count, sum(cost_usd) AS cost_usd, sum(simulated_cost_usd) AS simulated_cost_usd
               FROM efficiency WHERE ${window.where} GROUP BY task_type ORDER BY task_type`,
      );
      const sums: Record<string, EfficiencySums> = {};
      for (const { task_type, ...row } of statement.all(window.params) as Array<
        EfficiencySums & { task_type: string }
      >) {
        sums[task_type] = row;
      }
      return sums;
    },

    async reward(tenantId, workflowId) {
      const row = selectReward.get(workflowId, tenantId);
      return row === undefined ? undefined : toReward(row);
    },

    async listRewards(tenantId, filter, cursor, limit): Promise<Page<RewardRecord>> {
      const { rows, nextCursor } = page<RewardRow>('rewards', tenantId, rangeOf(filter), cursor, limit);
      return { items: rows.map(toReward), nextCursor };
    },

    async rewardSums(tenantId, filter) {
      const window = windowOf(tenantId, rangeOf(filter));
      const statement = prepared(
        `reward-sums:${window.shape}`,
        () => `SELECT count(*) AS count, coalesce(sum(outcome_reward), 0) AS outcome,
                 coalesce(sum(efficiency_reward), 0) AS efficiency, coalesce(sum(aggregate_reward), 0) AS aggregate,
                 coalesce(sum(preference_reward), 0) AS preference, count(preference_reward) AS with_preference
               FROM rewards WHERE ${window.where}`,
      );
      return statement.get(window.params) as RewardSums;
    },

    async addFeedback(tenantId, workflowId, feedback, at, recompute) {
      return committer.run(() => {
        const row = selectReward.get(workflowId, tenantId);
        if (row === undefined) return undefined;
        insertFeedback.run(workflowId, tenantId, JSON.stringify(feedback.actions), feedback.note ?? null, at);
        const next = recompute(actionsOf(tenantId, workflowId), toReward(row));
        updateReward.run(
          next.outcome_reward,
          next.efficiency_reward,
          next.preference_reward,
          next.aggregate_reward,
          ms(next.updated_at),
          workflowId,
          tenantId,
        );
        return next;
      });
    },
  };
}
