/**
 * Tool analytics and retrieval engagement (docs/design.md#agent-tools): one record per tool call and one per prompt
 * run with `retrieval`, committed with the node they belong to, read by the analytics endpoints,
 * the description audit (Tier 2) and the engagement guard (`auto`).
 */

export interface ToolCallRecord {
  tenantId: string;
  workflowId: string;
  nodeId: string;
  tool: string;
  agent: string;
  /** provider/model of the call that asked for the tool. */
  model: string;
  success: boolean;
  latencyMs: number;
  /** UTF-8 bytes of what the model was given back. */
  resultBytes: number;
  at: number;
}

export const RETRIEVAL_MODES = ['tools', 'json-actions'] as const;
export type RetrievalMode = (typeof RETRIEVAL_MODES)[number];
export const HALT_REASONS = ['finalized', 'budget_exhausted', 'error'] as const;
export type HaltReason = (typeof HALT_REASONS)[number];
export type GuardKind = 'none' | 'min_calls' | 'auto';

export interface RetrievalRunRecord {
  tenantId: string;
  workflowId: string;
  nodeId: string;
  nodeName: string;
  taskType: string;
  agent: string;
  model: string;
  corpusId: string;
  mode: RetrievalMode;
  retrievalCalls: number;
  /** Model turns the loop took (the forced final answer included). */
  steps: number;
  loopExhausted: boolean;
  haltReason: HaltReason;
  guard: GuardKind;
  guardMinCalls: number | null;
  guardInterventions: number;
  /** memory_retrieval_relevant of this run; null when nothing was retrieved. */
  relevant: boolean | null;
  at: number;
}

/** Which retrieval runs an engagement query counts. */
export interface EngagementFilter {
  taskType?: string;
  /** Epoch ms, inclusive. */
  from?: number;
  /** Epoch ms, exclusive. */
  to?: number;
}

/**
 * Sums of one model's retrieval runs in a window, split by whether a guard applied (a run is
 * guarded when a `minCalls` was in force for it: fixed, or chosen by `auto`).
 */
export interface EngagementSums {
  model: string;
  guarded: boolean;
  runs: number;
  /** Workflows (tasks) with a run in this group, and with a run of this model in either group. */
  tasks: number;
  modelTasks: number;
  retrievalCalls: number;
  steps: number;
  loopExhausted: number;
  guardInterventions: number;
  /** Σ outcome_reward over the runs whose workflow has a reward, and how many do. */
  outcomeReward: number;
  rewarded: number;
}
