import type { EngagementSums } from '../domain/tool-analytics.js';
import type {
  DashboardSums,
  DurationCount,
  ModelSums,
  SumCount,
  TaskComplexityGroup,
  TaskModelGroup,
} from '../domain/usage-analytics.js';

/**
 * The rows the analytics queries of both stores return, and what they become (one mapping,
 * driver-free): the dashboard's sums over efficiency records, rewards, tool calls, retrieval runs
 * and the records' journal rows; the per-model figures; the engagement sums.
 */

/** Outcome reasons a quality gate (responseFormat checks, a review) decided; the first three passed it. */
export const GATE_PASSED = `'tests_passed_first_try', 'tests_passed_after_fix', 'review_approved'`;
export const GATE_FAILED = `'tests_partial_pass', 'review_concerns_minor', 'tests_failed', 'review_blocked'`;

export interface RecordSumsRow {
  tasks: number;
  successes: number;
  efficiency_score: number;
  agents_spawned: number;
  total_agent_calls: number;
  wall_time_seconds: number;
  recovery_sum: number;
  recovery_count: number;
  goal_sum: number;
  goal_count: number;
  selection_sum: number;
  selection_count: number;
  gates_passed: number;
  gates_count: number;
  cost_usd: number;
  simulated_cost_usd: number;
}

/** The figures of a window's rows, each query's row as both stores return it. */
export interface DashboardRows {
  records: RecordSumsRow;
  rewards: { count: number; outcome: number; preference: number; with_preference: number } | undefined;
  toolCalls: { calls: number; successes: number } | undefined;
  relevance: { judged: number; relevant: number } | undefined;
  guardrails: { checks: number; passed: number } | undefined;
  cacheHits: { hits: number; tokens: number; cost: number; simulated_cost: number } | undefined;
  byTaskModel: TaskModelGroup[];
  byTaskComplexity: TaskComplexityGroup[];
}

const sc = (sum: number | null, count: number | null): SumCount => ({ sum: sum ?? 0, count: count ?? 0 });

export function toDashboardSums(rows: DashboardRows): DashboardSums {
  const r = rows.records;
  const w = rows.rewards ?? { count: 0, outcome: 0, preference: 0, with_preference: 0 };
  const calls = rows.toolCalls ?? { calls: 0, successes: 0 };
  const rel = rows.relevance ?? { judged: 0, relevant: 0 };
  const guard = rows.guardrails ?? { checks: 0, passed: 0 };
  const hits = rows.cacheHits ?? { hits: 0, tokens: 0, cost: 0, simulated_cost: 0 };
  return {
    tasks: r.tasks,
    successes: r.successes,
    efficiencyScore: r.efficiency_score,
    agentsSpawned: r.agents_spawned,
    totalAgentCalls: r.total_agent_calls,
    wallTimeSeconds: r.wall_time_seconds,
    recoveryRate: sc(r.recovery_sum, r.recovery_count),
    goalAdherence: sc(r.goal_sum, r.goal_count),
    toolSelection: sc(r.selection_sum, r.selection_count),
    qualityGates: sc(r.gates_passed, r.gates_count),
    costUsd: r.cost_usd,
    simulatedCostUsd: r.simulated_cost_usd,
    rewards: { count: w.count, outcome: w.outcome, preference: sc(w.preference, w.with_preference) },
    toolCalls: sc(calls.successes, calls.calls),
    retrievalRelevance: sc(rel.relevant, rel.judged),
    guardrails: sc(guard.passed, guard.checks),
    cache: {
      hits: hits.hits,
      tokensSaved: hits.tokens,
      costSavedUsd: hits.cost,
      simulatedCostSavedUsd: hits.simulated_cost,
    },
    byTaskModel: rows.byTaskModel,
    byTaskComplexity: rows.byTaskComplexity,
  };
}

/** A model's figures from the window's efficiency records (`by_model`) and their rewards. */
export interface ModelRow {
  model: string;
  simulated: 0 | 1;
  calls: number;
  tokens_in: number;
  tokens_out: number;
  cost_usd: number;
  tasks: number;
  successful_tasks: number;
  reward_sum: number;
  reward_count: number;
}

/** A model's ended calls (agentPromptEnd events) in the window's records' journal rows. */
export interface EndedCalls {
  ended: number;
  failed: number;
  /** Ascending by ms. */
  durations: DurationCount[];
}

/**
 * The window's models: those with a task, then those with ended calls but no task here (they still
 * count when another piece of the window has their task).
 */
export function toModelSums(tasks: readonly ModelRow[], ended: ReadonlyMap<string, EndedCalls>): ModelSums[] {
  const known = new Set(tasks.map((row) => row.model));
  const callsOnly: ModelRow[] = [...ended.keys()]
    .filter((model) => model !== null && !known.has(model))
    .map((model) => ({
      model,
      simulated: 0,
      calls: 0,
      tokens_in: 0,
      tokens_out: 0,
      cost_usd: 0,
      tasks: 0,
      successful_tasks: 0,
      reward_sum: 0,
      reward_count: 0,
    }));
  return [...tasks, ...callsOnly].map((row) => {
    const calls = ended.get(row.model);
    return {
      model: row.model,
      simulated: row.simulated === 1,
      calls: row.calls,
      tokensIn: row.tokens_in,
      tokensOut: row.tokens_out,
      costUsd: row.cost_usd,
      tasks: row.tasks,
      successfulTasks: row.successful_tasks,
      aggregateReward: sc(row.reward_sum, row.reward_count),
      endedCalls: calls?.ended ?? 0,
      failedCalls: calls?.failed ?? 0,
      durations: calls?.durations ?? [],
    };
  });
}

export interface EngagementRow {
  model: string;
  guarded: 0 | 1;
  runs: number;
  tasks: number;
  model_tasks: number;
  retrieval_calls: number;
  steps: number;
  loop_exhausted: number;
  guard_interventions: number;
  outcome_reward: number | null;
  rewarded: number;
}

export function toEngagementSums(row: EngagementRow): EngagementSums {
  return {
    model: row.model,
    guarded: row.guarded === 1,
    runs: row.runs,
    tasks: row.tasks,
    modelTasks: row.model_tasks,
    retrievalCalls: row.retrieval_calls,
    steps: row.steps,
    loopExhausted: row.loop_exhausted,
    guardInterventions: row.guard_interventions,
    outcomeReward: row.outcome_reward ?? 0,
    rewarded: row.rewarded,
  };
}
