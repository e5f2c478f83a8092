import type { DurationCount, ModelSums, ToolCallSums } from '../domain/usage-analytics.js';
import { round } from './run-facts.js';

/**
 * Tool analytics and model analytics (docs/design.md#events-spans-metrics-and-rewards; loki-mode's `tool_analytics`).
 * Pure: per tool and
 * per model figures from the store's sums, and `insights` by the named rules below.
 *
 * - avg_result_quality: the share of a tool's calls that succeeded AND whose prompt node then
 *   completed — the result was usable and the answer it fed into was accepted.
 * - common_patterns: the tools most often called next, in the same prompt node, right after this
 *   one ("inspect_current_node → read_ancestor_chain"), at least MIN_PATTERN_COUNT times, most frequent first.
 */

/** A tool (or an agent's use of it) needs this many calls in the window before a rule judges it. */
export const MIN_INSIGHT_CALLS = 5;
/** "X fails N% of calls": a tool's success rate below this. */
export const LOW_SUCCESS_RATE = 0.8;
/** "X success drops to 0.65 for agent Y": an agent this far (or more) below the tool's overall rate. */
export const AGENT_DROP = 0.2;
/** "X averages N ms per call": a mean latency at or above this. */
export const SLOW_TOOL_MS = 2000;
/** "X succeeds but only N% of its results feed a completed node": quality below this (success not low). */
export const LOW_RESULT_QUALITY = 0.7;
export const MIN_PATTERN_COUNT = 2;
export const MAX_TOOL_PATTERNS = 3;

export interface ToolFigures {
  calls: number;
  success_rate: number;
  /** Mean efficiency_score of the workflows that called the tool (each once); null: none has a record. */
  avg_efficiency: number | null;
  avg_latency_ms: number;
  avg_result_quality: number;
  common_patterns: string[];
  by_agent: Record<string, { calls: number; success: number }>;
}

const pct = (x: number): number => Math.round(x * 100);

export function toolReport(sums: ToolCallSums): { by_tool: Record<string, ToolFigures>; insights: string[] } {
  const totals = new Map<string, { calls: number; successes: number; latency: number; useful: number }>();
  for (const row of sums.byToolAgent) {
    const t = totals.get(row.tool) ?? { calls: 0, successes: 0, latency: 0, useful: 0 };
    t.calls += row.calls;
    t.successes += row.successes;
    t.latency += row.latencyMs;
    t.useful += row.useful;
    totals.set(row.tool, t);
  }
  const byTool: Record<string, ToolFigures> = {};
  const insights: string[] = [];
  for (const [tool, t] of totals) {
    const successRate = round(t.successes / t.calls);
    const quality = round(t.useful / t.calls);
    const latency = round(t.latency / t.calls, 1);
    const agents = sums.byToolAgent.filter((row) => row.tool === tool);
    const efficiency = sums.efficiency.find((row) => row.tool === tool);
    byTool[tool] = {
      calls: t.calls,
      success_rate: successRate,
      avg_efficiency:
        efficiency && efficiency.workflows > 0 ? round(efficiency.efficiencyScore / efficiency.workflows) : null,
      avg_latency_ms: latency,
      avg_result_quality: quality,
      common_patterns: sums.pairs
        .filter((p) => p.tool === tool && p.count >= MIN_PATTERN_COUNT)
        .sort((a, b) => b.count - a.count || a.next.localeCompare(b.next))
        .slice(0, MAX_TOOL_PATTERNS)
        .map((p) => `${tool} → ${p.next}`),
      by_agent: Object.fromEntries(
        agents.map((row) => [row.agent, { calls: row.calls, success: round(row.successes / row.calls) }]),
      ),
    };
    if (t.calls < MIN_INSIGHT_CALLS) continue;
    if (successRate < LOW_SUCCESS_RATE) {
      insights.push(`${tool} fails ${pct(1 - successRate)}% of calls - check its input schema and description`);
    } else if (quality < LOW_RESULT_QUALITY) {
      insights.push(
        `${tool} succeeds but only ${pct(quality)}% of its results feed a completed node - review what it returns`,
      );
    }
    if (latency >= SLOW_TOOL_MS)
      insights.push(`${tool} averages ${Math.round(latency)} ms per call - narrow its inputs`);
    for (const row of agents) {
      if (row.calls < MIN_INSIGHT_CALLS) continue;
      const rate = row.successes / row.calls;
      if (rate === 1 && agents.length > 1) {
        insights.push(`${row.agent} agent 100% success with ${tool} - use more for ${tool} calls`);
      } else if (rate <= successRate - AGENT_DROP) {
        insights.push(`${tool} success drops to ${rate.toFixed(2)} for agent ${row.agent} - simplify its calls`);
      }
    }
  }
  return { by_tool: byTool, insights };
}

/** Nearest rank over counted values, ascending: the smallest value with at least p of the calls at or below it. */
export function percentile(sorted: readonly DurationCount[], p: number): number | null {
  const total = sorted.reduce((sum, d) => sum + d.calls, 0);
  // Stryker disable next-line ConditionalExpression: with no calls the loop below reaches no rank and returns null too
  if (total === 0) return null;
  const rank = Math.min(total, Math.max(1, Math.ceil(p * total)));
  let seen = 0;
  for (const d of sorted) {
    seen += d.calls;
    if (seen >= rank) return d.ms;
  }
  return null;
}

export interface ModelFigures {
  model: string;
  simulated: boolean;
  calls: number;
  tokens_in: number;
  tokens_out: number;
  cost_usd: number;
  simulated_cost_usd: number;
  latency_ms: { p50: number | null; p95: number | null };
  call_success_rate: number | null;
  tasks: number;
  success_rate: number;
  mean_aggregate_reward: number | null;
  cost_per_successful_task_usd: number | null;
  simulated_cost_per_successful_task_usd: number | null;
}

/**
 * Per model: money of a real model in the `cost_usd` fields, what a sim/* model would have cost in
 * the `simulated_` fields (the other one 0 / null), and totals kept apart the same way.
 */
export function modelReport(sums: readonly ModelSums[]) {
  const models: ModelFigures[] = sums.map((m) => {
    const cost = round(m.costUsd, 8);
    const perSuccess = m.successfulTasks === 0 ? null : round(m.costUsd / m.successfulTasks, 8);
    return {
      model: m.model,
      simulated: m.simulated,
      calls: m.calls,
      tokens_in: m.tokensIn,
      tokens_out: m.tokensOut,
      cost_usd: m.simulated ? 0 : cost,
      simulated_cost_usd: m.simulated ? cost : 0,
      latency_ms: { p50: percentile(m.durations, 0.5), p95: percentile(m.durations, 0.95) },
      call_success_rate: m.endedCalls === 0 ? null : round((m.endedCalls - m.failedCalls) / m.endedCalls),
      tasks: m.tasks,
      success_rate: round(m.successfulTasks / m.tasks),
      mean_aggregate_reward:
        m.aggregateReward.count === 0 ? null : round(m.aggregateReward.sum / m.aggregateReward.count),
      cost_per_successful_task_usd: m.simulated ? null : perSuccess,
      simulated_cost_per_successful_task_usd: m.simulated ? perSuccess : null,
    };
  });
  const real = models.reduce((sum, m) => sum + m.cost_usd, 0);
  const simulated = models.reduce((sum, m) => sum + m.simulated_cost_usd, 0);
  return { models, totals: { cost_usd: round(real, 8), simulated_cost_usd: round(simulated, 8) } };
}
