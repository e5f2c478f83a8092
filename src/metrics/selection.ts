import { SELECTION_STRATEGIES, type SelectionStrategy } from '../domain/agent-selection.js';
import type { AgentRunSums, SavingsSums, StrategySums } from '../domain/agents.js';
import type { RandomSource } from '../domain/ports.js';

/**
 * Agent selection by past reward (docs/design.md#complexity-allocation-selection-and-review; loki-mode's
 * `get_agent_performance_score`).
 * - greedy: the mean aggregate reward of the candidate's past runs of the same task type and
 *   complexity; 0.5 without history (the seed's neutral score).
 * - thompson: a sample from Beta(1 + Σr, 1 + Σ(1 − r)) with each reward mapped from [−1, 1] to
 *   [0, 1], so a candidate without history (Beta(1, 1): uniform) gets tried while a well-rewarded
 *   one wins most draws.
 * The highest score wins; ties go to the earlier candidate.
 */

export const NEUTRAL_SCORE = 0.5;

export interface ScoredCandidate {
  name: string;
  runs: number;
  meanReward: number | null;
  score: number;
}

export function scoreCandidates(
  names: readonly string[],
  history: ReadonlyMap<string, Pick<AgentRunSums, 'runs' | 'rewardSum'>>,
  strategy: Exclude<SelectionStrategy, 'cost_aware'>,
  random: RandomSource,
): { chosen: string; scores: ScoredCandidate[] } {
  const scores = names.map((name): ScoredCandidate => {
    const sums = history.get(name);
    const runs = sums?.runs ?? 0;
    const meanReward = sums && runs > 0 ? sums.rewardSum / runs : null;
    const score =
      strategy === 'greedy' ? (meanReward ?? NEUTRAL_SCORE) : thompsonSample(runs, sums?.rewardSum ?? 0, random);
    return { name, runs, meanReward: meanReward === null ? null : round(meanReward), score: round(score) };
  });
  let best = scores[0];
  if (best === undefined) throw new Error('no candidates to select from');
  for (const candidate of scores) if (candidate.score > best.score) best = candidate;
  return { chosen: best.name, scores };
}

/** Beta(1 + Σr', 1 + Σ(1 − r')) with r' = (r + 1) / 2: Σr' = (Σr + n) / 2. */
function thompsonSample(runs: number, rewardSum: number, random: RandomSource): number {
  const successes = Math.min(runs, Math.max(0, (rewardSum + runs) / 2));
  return sampleBeta(1 + successes, 1 + runs - successes, random);
}

/** X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b). */
export function sampleBeta(a: number, b: number, random: RandomSource): number {
  const x = sampleGamma(a, random);
  const y = sampleGamma(b, random);
  return x + y === 0 ? 0.5 : x / (x + y);
}

/** Marsaglia–Tsang for shape ≥ 1 (every shape here is). */
function sampleGamma(shape: number, random: RandomSource): number {
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      x = sampleNormal(random);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = random();
    if (u < 1 - 0.0331 * x ** 4 || Math.log(Math.max(u, Number.MIN_VALUE)) < 0.5 * x * x + d * (1 - v + Math.log(v))) {
      return d * v;
    }
  }
}

/** Box–Muller. */
function sampleNormal(random: RandomSource): number {
  const u = Math.max(random(), Number.MIN_VALUE);
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

const round = (value: number): number => Math.round(value * 10_000) / 10_000;

/** mulberry32: a small seeded PRNG, for deterministic selection (tests, replays). */
export function seededRandom(seed: number): RandomSource {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export interface StrategyFigures {
  strategy: SelectionStrategy;
  runs: number;
  mean_aggregate_reward: number | null;
  success_rate: number | null;
  cost_usd: number;
  simulated_cost_usd: number;
  cost_per_success_usd: number | null;
  simulated_cost_per_success_usd: number | null;
  saved_usd: number;
  simulated_saved_usd: number;
}

/** The seed's "A/B test new selection strategies": every strategy, with zeros when it selected nothing. */
export function strategyReport(sums: readonly StrategySums[]): StrategyFigures[] {
  return SELECTION_STRATEGIES.map((strategy): StrategyFigures => {
    const s = sums.find((row) => row.strategy === strategy);
    const runs = s?.runs ?? 0;
    const successes = s?.successes ?? 0;
    const ratio = (value: number, over: number) => (over === 0 ? null : round(value / over));
    return {
      strategy,
      runs,
      mean_aggregate_reward: s ? ratio(s.rewardSum, s.rewarded) : null,
      success_rate: ratio(successes, runs),
      cost_usd: round6(s?.costUsd ?? 0),
      simulated_cost_usd: round6(s?.simulatedCostUsd ?? 0),
      cost_per_success_usd: successes === 0 ? null : round6((s?.costUsd ?? 0) / successes),
      simulated_cost_per_success_usd: successes === 0 ? null : round6((s?.simulatedCostUsd ?? 0) / successes),
      saved_usd: round6(s?.savedUsd ?? 0),
      simulated_saved_usd: round6(s?.savedSimulatedUsd ?? 0),
    };
  });
}

export interface SavingsFigures {
  task_type: string;
  strategy: SelectionStrategy;
  runs: number;
  counted: number;
  saved_usd: number;
  simulated_saved_usd: number;
}

/** Counterfactual savings per task type and strategy (docs/workflows.md#counterfactual-savings). */
export function savingsReport(sums: readonly SavingsSums[]): SavingsFigures[] {
  return sums.map((s) => ({
    task_type: s.taskType,
    strategy: s.strategy,
    runs: s.runs,
    counted: s.counted,
    saved_usd: round6(s.savedUsd),
    simulated_saved_usd: round6(s.savedSimulatedUsd),
  }));
}

/** What the dashboard shows beside the cache's savings: every strategy's, summed. */
export function selectionSavingsTotal(sums: readonly StrategySums[]): {
  saved_usd: number;
  simulated_saved_usd: number;
} {
  return {
    saved_usd: round6(sums.reduce((total, s) => total + s.savedUsd, 0)),
    simulated_saved_usd: round6(sums.reduce((total, s) => total + s.savedSimulatedUsd, 0)),
  };
}

const round6 = (value: number): number => Math.round(value * 1_000_000) / 1_000_000;
