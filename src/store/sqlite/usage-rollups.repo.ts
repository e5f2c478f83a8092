import type {
  DashboardSums,
  DurationCount,
  ModelSums,
  TaskComplexityGroup,
  TaskModelGroup,
} from '../../domain/usage-analytics.js';
import type { RecordSumsRow } from '../usage-rows.js';
import type { Segment } from '../usage-sums.js';
import type { Db } from './db.js';

/**
 * Reads of the usage roll-ups (migrations/sqlite/0022, docs/analytics.md#dashboard-and-analytics): a window is cut
 * into whole UTC days, whole hours around them, and the partial hours at its edges (../usage-sums.ts
 * segmentsOf); the roll-ups answer the first two, the raw rows (usage-analytics.repo.ts) the edges,
 * and the pieces add up.
 */

type Totals = Omit<DashboardSums, 'byTaskModel' | 'byTaskComplexity'>;

/** The record sums both stores read, plus what only the roll-ups keep. */
interface TotalsRow extends RecordSumsRow {
  guard_checks: number;
  guard_passed: number;
  cache_hits: number;
  cache_tokens: number;
  cache_cost_usd: number;
  cache_simulated_cost_usd: number;
  rewards: number;
  outcome_reward: number;
  preference_sum: number;
  preference_count: number;
  tool_calls: number;
  tool_successes: number;
  judged_runs: number;
  relevant_runs: number;
}

const TOTAL_COLUMNS = [
  'tasks',
  'successes',
  'efficiency_score',
  'agents_spawned',
  'total_agent_calls',
  'wall_time_seconds',
  'recovery_sum',
  'recovery_count',
  'goal_sum',
  'goal_count',
  'selection_sum',
  'selection_count',
  'gates_passed',
  'gates_count',
  'cost_usd',
  'simulated_cost_usd',
  'guard_checks',
  'guard_passed',
  'cache_hits',
  'cache_tokens',
  'cache_cost_usd',
  'cache_simulated_cost_usd',
  'rewards',
  'outcome_reward',
  'preference_sum',
  'preference_count',
  'tool_calls',
  'tool_successes',
  'judged_runs',
  'relevant_runs',
] as const;

interface ModelRollupRow {
  model: string;
  simulated: number;
  calls: number;
  tokens_in: number;
  tokens_out: number;
  cost_usd: number;
  tasks: number;
  successful_tasks: number;
  reward_sum: number;
  reward_count: number;
  ended: number;
  failed: number;
}

const IN_PERIODS = 'tenant_id = ? AND grain = ? AND period >= ? AND period < ?';
type Params = [string, number, number, number];

export interface RollupReader {
  dashboard(tenantId: string, segment: Extract<Segment, { kind: 'rollup' }>): DashboardSums;
  taskModels(tenantId: string, segment: Extract<Segment, { kind: 'rollup' }>): TaskModelGroup[];
  models(tenantId: string, segment: Extract<Segment, { kind: 'rollup' }>): ModelSums[];
}

export function createRollupReader(db: Db): RollupReader {
  const totals = db.prepare<Params, TotalsRow>(
    `SELECT ${TOTAL_COLUMNS.map((c) => `coalesce(sum(${c}), 0) AS ${c}`).join(', ')}
       FROM usage_rollup WHERE ${IN_PERIODS}`,
  );
  const byTaskModel = db.prepare<Params, TaskModelGroup>(
    `SELECT task_type AS taskType, model, sum(tasks) AS tasks, sum(successes) AS successes,
            sum(efficiency_score) AS efficiencyScore
       FROM usage_task_model_rollup WHERE ${IN_PERIODS} GROUP BY task_type, model`,
  );
  const byTaskComplexity = db.prepare<Params, TaskComplexityGroup>(
    `SELECT task_type AS taskType, complexity, sum(tasks) AS tasks, sum(successes) AS successes,
            sum(efficiency_score) AS efficiencyScore, sum(wall_time_seconds) AS wallTimeSeconds
       FROM usage_task_complexity_rollup WHERE ${IN_PERIODS} GROUP BY task_type, complexity`,
  );
  const models = db.prepare<Params, ModelRollupRow>(
    `SELECT model, max(simulated) AS simulated, sum(calls) AS calls, sum(tokens_in) AS tokens_in,
            sum(tokens_out) AS tokens_out, sum(cost_usd) AS cost_usd, sum(tasks) AS tasks,
            sum(successful_tasks) AS successful_tasks, sum(reward_sum) AS reward_sum,
            sum(reward_count) AS reward_count, sum(ended) AS ended, sum(failed) AS failed
       FROM usage_model_rollup WHERE ${IN_PERIODS} GROUP BY model`,
  );
  const latency = db.prepare<Params, { model: string; ms: number; calls: number }>(
    `SELECT model, floor_ms AS ms, sum(calls) AS calls
       FROM usage_latency_rollup WHERE ${IN_PERIODS} GROUP BY model, floor_ms HAVING sum(calls) > 0`,
  );

  return {
    dashboard(tenantId, { grain, from, to }) {
      const r = totals.get(tenantId, grain, from, to) as TotalsRow;
      const totalsOf: Totals = {
        tasks: r.tasks,
        successes: r.successes,
        efficiencyScore: r.efficiency_score,
        agentsSpawned: r.agents_spawned,
        totalAgentCalls: r.total_agent_calls,
        wallTimeSeconds: r.wall_time_seconds,
        recoveryRate: { sum: r.recovery_sum, count: r.recovery_count },
        goalAdherence: { sum: r.goal_sum, count: r.goal_count },
        toolSelection: { sum: r.selection_sum, count: r.selection_count },
        qualityGates: { sum: r.gates_passed, count: r.gates_count },
        costUsd: r.cost_usd,
        simulatedCostUsd: r.simulated_cost_usd,
        rewards: {
          count: r.rewards,
          outcome: r.outcome_reward,
          preference: { sum: r.preference_sum, count: r.preference_count },
        },
        toolCalls: { sum: r.tool_successes, count: r.tool_calls },
        retrievalRelevance: { sum: r.relevant_runs, count: r.judged_runs },
        guardrails: { sum: r.guard_passed, count: r.guard_checks },
        cache: {
          hits: r.cache_hits,
          tokensSaved: r.cache_tokens,
          costSavedUsd: r.cache_cost_usd,
          simulatedCostSavedUsd: r.cache_simulated_cost_usd,
        },
      };
      return {
        ...totalsOf,
        byTaskModel: byTaskModel.all(tenantId, grain, from, to),
        byTaskComplexity: byTaskComplexity.all(tenantId, grain, from, to),
      };
    },

    taskModels(tenantId, { grain, from, to }) {
      return byTaskModel.all(tenantId, grain, from, to);
    },

    models(tenantId, { grain, from, to }) {
      const durations = new Map<string, DurationCount[]>();
      for (const row of latency.all(tenantId, grain, from, to)) {
        const list = durations.get(row.model) ?? [];
        list.push({ ms: row.ms, calls: row.calls });
        durations.set(row.model, list);
      }
      return models.all(tenantId, grain, from, to).map((row) => ({
        model: row.model,
        simulated: row.simulated === 1,
        calls: row.calls,
        tokensIn: row.tokens_in,
        tokensOut: row.tokens_out,
        costUsd: row.cost_usd,
        tasks: row.tasks,
        successfulTasks: row.successful_tasks,
        aggregateReward: { sum: row.reward_sum, count: row.reward_count },
        endedCalls: row.ended,
        failedCalls: row.failed,
        durations: durations.get(row.model) ?? [],
      }));
    },
  };
}
