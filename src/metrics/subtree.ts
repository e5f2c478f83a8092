import type { EfficiencyRecord, SubtreeUsage } from '../domain/metrics.js';
import { recordCostUsd } from '../domain/metrics.js';
import { round } from './run-facts.js';

/**
 * A workflow's `subtree` (docs/design.md#events-spans-metrics-and-rewards): its children's own figures plus their
 * subtrees, so a parent's
 * record answers "what did this whole run cost" beside "what did this workflow itself do".
 */
export function subtreeUsage(children: readonly EfficiencyRecord[]): SubtreeUsage | null {
  if (children.length === 0) return null;
  const total: SubtreeUsage = {
    workflows: 0,
    agents_spawned: 0,
    total_agent_calls: 0,
    provider_requests: 0,
    tokens_in: 0,
    tokens_out: 0,
    cost_usd: 0,
    simulated_cost_usd: 0,
  };
  for (const child of children) {
    const { metrics } = child;
    const cost = recordCostUsd(child);
    total.workflows += 1;
    total.agents_spawned += metrics.agents_spawned;
    total.total_agent_calls += metrics.total_agent_calls;
    total.provider_requests += metrics.provider_requests ?? metrics.total_agent_calls;
    for (const usage of Object.values(metrics.by_model)) {
      total.tokens_in += usage.tokens_in;
      total.tokens_out += usage.tokens_out;
    }
    total.cost_usd += cost.real;
    total.simulated_cost_usd += cost.simulated;
    const nested = child.subtree;
    if (nested) {
      for (const key of Object.keys(total) as Array<keyof SubtreeUsage>) total[key] += nested[key];
    }
  }
  total.cost_usd = round(total.cost_usd, 8);
  total.simulated_cost_usd = round(total.simulated_cost_usd, 8);
  return total;
}
