/**
 * What the dashboard and the tool and model analytics read from storage
 * (docs/design.md#events-spans-metrics-and-rewards): sums and
 * counts over a tenant's rows in a time window, never averages — the rules that turn them into
 * rates, trends, insights and patterns live in src/metrics/dashboard.ts and tool-insights.ts.
 */

/** Epoch ms, `from` inclusive, `to` exclusive. */
export interface UsageWindow {
  from: number;
  to: number;
}

/** A sum and how many values went into it (values that were null are not counted). */
export interface SumCount {
  sum: number;
  count: number;
}

/** Efficiency records of one task type and model (a record counts once for every model it used). */
export interface TaskModelGroup {
  taskType: string;
  model: string;
  tasks: number;
  successes: number;
  efficiencyScore: number;
}

/** Efficiency records of one task type and complexity. */
export interface TaskComplexityGroup {
  taskType: string;
  complexity: string;
  tasks: number;
  successes: number;
  efficiencyScore: number;
  wallTimeSeconds: number;
}

/**
 * One dashboard window. Efficiency records, their guardrail spans and cache hits are those of the
 * workflows that ended in the window (efficiency.created_at = completed_at); rewards by their
 * created_at (also the completion time); tool calls and retrieval runs by when they happened.
 */
export interface DashboardSums {
  tasks: number;
  successes: number;
  efficiencyScore: number;
  agentsSpawned: number;
  totalAgentCalls: number;
  wallTimeSeconds: number;
  /** metrics.recovery_rate of the records that had retries. */
  recoveryRate: SumCount;
  /** quality_pillars.goal_adherence of the records that ran prompts. */
  goalAdherence: SumCount;
  /** quality_pillars.tool_selection_correct: sum = records with true, count = records not null. */
  toolSelection: SumCount;
  /** Records whose outcome reason says a quality gate (responseFormat tests, review) judged them: sum = passed. */
  qualityGates: SumCount;
  costUsd: number;
  simulatedCostUsd: number;
  rewards: {
    count: number;
    outcome: number;
    preference: SumCount;
  };
  /** tool_calls rows: sum = successes. */
  toolCalls: SumCount;
  /** retrieval_runs with a relevance verdict: sum = relevant. */
  retrievalRelevance: SumCount;
  /** guardrail_span rows: sum = not triggered (passed). */
  guardrails: SumCount;
  cache: {
    hits: number;
    tokensSaved: number;
    costSavedUsd: number;
    simulatedCostSavedUsd: number;
  };
  byTaskModel: TaskModelGroup[];
  byTaskComplexity: TaskComplexityGroup[];
}

/** Tool calls of one tool by one agent in a window. */
export interface ToolAgentSums {
  tool: string;
  agent: string;
  calls: number;
  successes: number;
  latencyMs: number;
  /** Calls that succeeded and whose prompt node completed. */
  useful: number;
}

/** How often `next` was the very next tool call after `tool` in the same prompt node. */
export interface ToolPairCount {
  tool: string;
  next: string;
  count: number;
}

export interface ToolCallSums {
  byToolAgent: ToolAgentSums[];
  pairs: ToolPairCount[];
  /** Per tool: the workflows that called it in the window (each once) that have an efficiency record. */
  efficiency: ToolEfficiencySums[];
}

export interface ToolEfficiencySums {
  tool: string;
  workflows: number;
  /** Σ efficiency_score of those workflows. */
  efficiencyScore: number;
}

/** One model over the workflows that ended in a window. */
export interface ModelSums {
  model: string;
  simulated: boolean;
  /** From the records' by_model: logical calls, tokens, cost (simulated money for a sim/* model). */
  calls: number;
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
  /** Workflows that used the model, and those of them with outcome success. */
  tasks: number;
  successfulTasks: number;
  /** aggregate_reward of those workflows that have a reward. */
  aggregateReward: SumCount;
  /** agentPromptEnd events: calls that ended, and those that ended with an error. */
  endedCalls: number;
  failedCalls: number;
  /**
   * agentPromptEnd.duration of the ended calls, ascending: `ms` a duration, or for whole hours and
   * days read from the roll-ups the floor of its histogram bucket (a power of 1.1, at most ~9% below).
   */
  durations: DurationCount[];
}

/** How many ended calls took `ms` (or fell in the bucket whose floor is `ms`). */
export interface DurationCount {
  ms: number;
  calls: number;
}
