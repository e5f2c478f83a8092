import type { EngagementStore } from '../../domain/ports.js';
import type { EngagementFilter, EngagementSums } from '../../domain/tool-analytics.js';
import { type EngagementRow, toEngagementSums } from '../usage-rows.js';
import type { Db } from './db.js';

/**
 * Retrieval engagement sums (migrations/sqlite/0010) for the analytics and the auto guard: one indexed
 * range scan of a tenant's runs, each joined to its workflow's reward (the outcome it led to).
 */
export function createSqliteEngagementStore(db: Db): EngagementStore {
  const query = (typed: boolean) =>
    db.prepare<unknown[], EngagementRow>(
      `WITH runs AS (
         SELECT * FROM retrieval_runs WHERE tenant_id = ? ${typed ? 'AND task_type = ?' : ''} AND at >= ? AND at < ?)
       SELECT r.model, (r.guard_min_calls IS NOT NULL) AS guarded, COUNT(*) AS runs,
              COUNT(DISTINCT r.workflow_id) AS tasks,
              (SELECT COUNT(DISTINCT m.workflow_id) FROM runs m WHERE m.model = r.model) AS model_tasks,
              SUM(r.retrieval_calls) AS retrieval_calls, SUM(r.steps) AS steps,
              SUM(r.loop_exhausted) AS loop_exhausted, SUM(r.guard_interventions) AS guard_interventions,
              SUM(w.outcome_reward) AS outcome_reward, COUNT(w.outcome_reward) AS rewarded
         FROM runs r LEFT JOIN rewards w ON w.workflow_id = r.workflow_id AND w.tenant_id = r.tenant_id
        GROUP BY r.model, guarded ORDER BY r.model, guarded`,
    );
  const all = query(false);
  const ofType = query(true);
  return {
    async sums(tenantId: string, filter: EngagementFilter): Promise<EngagementSums[]> {
      const range = [filter.from ?? 0, filter.to ?? Number.MAX_SAFE_INTEGER];
      const rows =
        filter.taskType === undefined ? all.all(tenantId, ...range) : ofType.all(tenantId, filter.taskType, ...range);
      return rows.map(toEngagementSums);
    },
  };
}
