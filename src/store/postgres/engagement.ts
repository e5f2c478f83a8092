import type pg from 'pg';
import type { EngagementStore } from '../../domain/ports.js';
import type { EngagementFilter, EngagementSums } from '../../domain/tool-analytics.js';
import { type EngagementRow, toEngagementSums } from '../usage-rows.js';
import { timeBound } from './transaction.js';

/**
 * Retrieval engagement sums on PostgreSQL, the SQLite store's query (sqlite/engagement.repo.ts):
 * one range scan of a tenant's runs (retrieval_runs_by_tenant_time, or _type_time with a task
 * type), each joined to its workflow's reward.
 */
export function createPostgresEngagementStore(pool: pg.Pool): EngagementStore {
  return {
    async sums(tenantId: string, filter: EngagementFilter): Promise<EngagementSums[]> {
      const typed = filter.taskType !== undefined;
      const { rows } = await pool.query<EngagementRow>(
        `WITH runs AS (
           SELECT * FROM retrieval_runs WHERE tenant_id = $1 AND at >= $2 AND at < $3 ${typed ? 'AND task_type = $4' : ''})
         SELECT r.model, (r.guard_min_calls IS NOT NULL)::int AS guarded, count(*) AS runs,
                count(DISTINCT r.workflow_id) AS tasks,
                (SELECT count(DISTINCT m.workflow_id) FROM runs m WHERE m.model = r.model) AS model_tasks,
                sum(r.retrieval_calls) AS retrieval_calls, sum(r.steps) AS steps,
                sum(r.loop_exhausted) AS loop_exhausted, sum(r.guard_interventions) AS guard_interventions,
                sum(w.outcome_reward) AS outcome_reward, count(w.outcome_reward) AS rewarded
           FROM runs r LEFT JOIN rewards w ON w.workflow_id = r.workflow_id AND w.tenant_id = r.tenant_id
          GROUP BY r.model, 2 ORDER BY r.model COLLATE "C", 2`,
        [
          tenantId,
          timeBound(filter.from ?? 0, '>='),
          timeBound(filter.to ?? Number.MAX_SAFE_INTEGER, '<'),
          ...(typed ? [filter.taskType] : []),
        ],
      );
      return rows.map(toEngagementSums);
    },
  };
}
