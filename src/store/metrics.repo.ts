import { ValidationError } from '../domain/errors.js';
import {
  type EfficiencyRecord,
  EfficiencyRecordSchema,
  type FeedbackAction,
  FeedbackActionSchema,
  type RewardRecord,
  RewardRecordSchema,
} from '../domain/metrics.js';
import type { ChangeSet, MetricsFilter, MetricsStore } from '../domain/ports.js';
import type { Db } from './db.js';
import type { GroupCommitter } from './group-commit.js';

/**
 * The efficiency, rewards and feedback tables (migrations/0006). Records and rewards are written by
 * `apply`, inside the workflow store's `applyChanges` transaction, so they commit with the
 * workflow's final state or not at all; feedback goes through the group committer.
 */

interface EfficiencyRow {
  record: string;
}

interface RewardRow {
  workflow_id: string;
  task_type: string;
  complexity: string;
  outcome_reward: number;
  efficiency_reward: number;
  preference_reward: number | null;
  aggregate_reward: number;
  created_at: number;
  updated_at: number;
}

const REWARD_COLUMNS =
  'workflow_id, task_type, complexity, outcome_reward, efficiency_reward, preference_reward, aggregate_reward, created_at, updated_at';

const ms = (iso: string): number => Date.parse(iso);

/** JSON and enum columns go back through zod: a corrupt row fails loudly, not downstream. */
function toRecord(row: EfficiencyRow): EfficiencyRecord {
  return EfficiencyRecordSchema.parse(JSON.parse(row.record));
}

function toReward(row: RewardRow): RewardRecord {
  return RewardRecordSchema.parse({
    ...row,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  });
}

function toActions(json: string): FeedbackAction[] {
  return FeedbackActionSchema.array().parse(JSON.parse(json));
}

function checkLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new ValidationError('Invalid limit', [{ path: 'limit', message: 'must be a positive integer' }]);
  }
}

const FILTERS = [
  ['from', 'created_at >= ?'],
  ['to', 'created_at <= ?'],
  ['taskType', 'task_type = ?'],
  ['complexity', 'complexity = ?'],
] as const;

export interface MetricsRows {
  /** Writes `changes.efficiency` then `changes.rewards` (both upserts by workflow id). */
  apply(changes: Pick<ChangeSet, 'efficiency' | 'rewards'>): void;
}

export function createMetricsRows(db: Db): MetricsRows {
  const upsertEfficiency = db.prepare(
    `INSERT INTO efficiency (workflow_id, tenant_id, task_type, complexity, outcome, created_at, record)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (workflow_id) DO UPDATE SET task_type = excluded.task_type, complexity = excluded.complexity,
       outcome = excluded.outcome, created_at = excluded.created_at, record = excluded.record`,
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
      for (const { tenant_id, ...record } of efficiency ?? []) {
        upsertEfficiency.run(
          record.task_id,
          tenant_id,
          record.task_type,
          record.complexity,
          record.outcome,
          ms(record.completed_at),
          JSON.stringify(record),
        );
      }
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
  const listStatements = new Map<string, ReturnType<Db['prepare']>>();

  /** One prepared statement per (table, filter combination); newest first, ties by workflow id. */
  function list(table: 'efficiency' | 'rewards', tenantId: string, filter: MetricsFilter, limit: number): unknown[] {
    checkLimit(limit);
    const present = FILTERS.filter(([key]) => filter[key] !== undefined);
    const key = `${table}:${present.map(([k]) => k).join(',')}`;
    let statement = listStatements.get(key);
    if (statement === undefined) {
      const columns = table === 'efficiency' ? 'record' : REWARD_COLUMNS;
      const where = ['tenant_id = ?', ...present.map(([, condition]) => condition)].join(' AND ');
      statement = db.prepare(
        `SELECT ${columns} FROM ${table} WHERE ${where} ORDER BY created_at DESC, workflow_id DESC LIMIT ?`,
      );
      listStatements.set(key, statement);
    }
    return statement.all([tenantId, ...present.map(([k]) => filter[k]), limit]);
  }

  const actionsOf = (tenantId: string, workflowId: string): FeedbackAction[] =>
    selectActions.all(workflowId, tenantId).flatMap(toActions);

  return {
    async efficiency(tenantId, workflowId) {
      const row = selectEfficiency.get(workflowId, tenantId);
      return row === undefined ? undefined : toRecord(row);
    },

    async listEfficiency(tenantId, filter, limit) {
      return (list('efficiency', tenantId, filter, limit) as EfficiencyRow[]).map(toRecord);
    },

    async reward(tenantId, workflowId) {
      const row = selectReward.get(workflowId, tenantId);
      return row === undefined ? undefined : toReward(row);
    },

    async listRewards(tenantId, filter, limit) {
      const range: MetricsFilter = {};
      if (filter.from !== undefined) range.from = filter.from;
      if (filter.to !== undefined) range.to = filter.to;
      return (list('rewards', tenantId, range, limit) as RewardRow[]).map(toReward);
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

    async feedbackActions(tenantId, workflowId) {
      return actionsOf(tenantId, workflowId);
    },
  };
}
