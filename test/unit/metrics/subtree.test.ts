import { describe, expect, it } from 'vitest';
import type { EfficiencyRecord, SubtreeUsage } from '../../../src/domain/metrics.js';
import { summarizeRun } from '../../../src/metrics/efficiency.js';
import { subtreeUsage } from '../../../src/metrics/subtree.js';
import { p, RunBuilder } from './fixtures.js';

/** A child's record with the figures the subtree adds up; `subtree` its own descendants. */
function child(
  figures: { spawned: number; calls: number; requests?: number; realUsd: number; simUsd: number },
  subtree: SubtreeUsage | null = null,
): EfficiencyRecord {
  const base = summarizeRun(new RunBuilder(p('a')).input());
  const metrics: EfficiencyRecord['metrics'] = {
    ...base.metrics,
    agents_spawned: figures.spawned,
    total_agent_calls: figures.calls,
    by_model: {
      'anthropic/claude-haiku-5-5': { calls: 1, tokens_in: 100, tokens_out: 10, cost_usd: figures.realUsd },
      'sim/opus': { calls: 1, tokens_in: 1000, tokens_out: 20, cost_usd: figures.simUsd, simulated: true },
    },
  };
  if (figures.requests === undefined) delete metrics.provider_requests;
  else metrics.provider_requests = figures.requests;
  return { ...base, metrics, subtree };
}

describe("a workflow's subtree: its children's figures and their subtrees", () => {
  it('is null without children', () => {
    expect(subtreeUsage([])).toBeNull();
  });

  it('adds each child’s own figures, real and simulated money apart, rounded to 8 decimals', () => {
    const total = subtreeUsage([
      child({ spawned: 1, calls: 3, requests: 4, realUsd: 0.000000014, simUsd: 0.5 }),
      child({ spawned: 0, calls: 2, realUsd: 0.000000014, simUsd: 0.25 }),
    ]);
    expect(total).toStrictEqual({
      workflows: 2,
      agents_spawned: 1,
      total_agent_calls: 5,
      // A record from before provider_requests counts its calls as requests.
      provider_requests: 6,
      tokens_in: 2200,
      tokens_out: 60,
      cost_usd: 0.00000003,
      simulated_cost_usd: 0.75,
    });
  });

  it('adds a child’s own subtree: the whole run below, not only the first generation', () => {
    const grandchildren: SubtreeUsage = {
      workflows: 3,
      agents_spawned: 2,
      total_agent_calls: 7,
      provider_requests: 9,
      tokens_in: 11,
      tokens_out: 13,
      cost_usd: 0.1,
      simulated_cost_usd: 0.2,
    };
    expect(
      subtreeUsage([child({ spawned: 3, calls: 1, requests: 1, realUsd: 0.5, simUsd: 0 }, grandchildren)]),
    ).toStrictEqual({
      workflows: 4,
      agents_spawned: 5,
      total_agent_calls: 8,
      provider_requests: 10,
      tokens_in: 1111,
      tokens_out: 43,
      cost_usd: 0.6,
      simulated_cost_usd: 0.2,
    });
  });
});
