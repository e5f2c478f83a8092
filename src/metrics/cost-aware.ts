import { COST_AWARE_MIN_RUNS } from '../domain/agent-selection.js';
import type { AgentRunSums } from '../domain/agents.js';
import type { RandomSource } from '../domain/ports.js';
import { betaCdf } from './beta.js';
import { sampleBeta } from './selection.js';

/**
 * `strategy: "cost_aware"` (docs/workflows.md#cost-aware-selection): the cheapest candidate whose
 * success is good enough, learned from the candidates' past runs of the same task type and
 * complexity.
 *
 * 1. Each candidate's success rate has the posterior Beta(1 + successes, 1 + failures) and its
 *    expected cost per run is the mean cost of those runs (real and simulated money apart).
 * 2. Warm-up: while a candidate has fewer than COST_AWARE_MIN_RUNS runs, the one with the fewest is
 *    tried (ties: the lower list price, then the earlier candidate), so every candidate has a
 *    measured cost and a success record before prices decide.
 * 3. Otherwise one Thompson draw per candidate; the highest draw is the leader (the exploration:
 *    while posteriors are wide the leader varies, as with `thompson`).
 * 4. A candidate is ruled out when its posterior puts it, with probability ≥ `confidence`, more than
 *    `tolerance` below the leader's draw, and its own draw is more than `tolerance` below too; the
 *    leader never is. The cheapest candidate not ruled out wins (by expected real cost, then
 *    simulated; ties: the earlier candidate).
 *
 * The burden of proof is on the expensive candidate: its price is paid only once the record shows,
 * with that confidence, that the cheaper ones are worse by more than the tolerance. The own-draw
 * clause is Thompson's exploration for the cheaper side: a candidate ruled out on a short or
 * unlucky record still wins a draw now and then, so its record can recover (without it, a cheap
 * agent that failed early would never run again).
 */

export interface CostAwareSettings {
  /** Success-rate points (0.03 = 3 points) a cheaper candidate may be below the leader. */
  tolerance: number;
  /** Probability at which a cheaper candidate counts as more than `tolerance` worse. */
  confidence: number;
}

export interface CostAwareInput {
  name: string;
  history: AgentRunSums | undefined;
  /** The candidate's model: USD for a million input and a million output tokens; orders the warm-up. */
  listPrice: number | null;
}

export interface CostAwareCandidate {
  name: string;
  runs: number;
  successes: number;
  alpha: number;
  beta: number;
  draw: number;
  expectedCostUsd: number | null;
  expectedSimulatedCostUsd: number | null;
  /** P(success < the leader's draw − tolerance); null for the leader itself. */
  belowLeader: number | null;
  eligible: boolean;
}

export type CostAwareReason = 'warm_up' | 'leader_cheapest' | 'cheaper_within_tolerance';

export interface CostAwareDecision {
  chosen: string;
  leader: string;
  reason: CostAwareReason;
  candidates: CostAwareCandidate[];
}

export function decideCostAware(
  inputs: readonly CostAwareInput[],
  settings: CostAwareSettings,
  random: RandomSource,
): CostAwareDecision {
  if (inputs.length === 0) throw new Error('no candidates to select from');
  const drawn = inputs.map((input) => {
    const runs = input.history?.runs ?? 0;
    const successes = Math.min(runs, input.history?.successes ?? 0);
    const alpha = 1 + successes;
    const beta = 1 + runs - successes;
    return { input, runs, successes, alpha, beta, draw: sampleBeta(alpha, beta, random) };
  });
  // Stryker disable next-line EqualityOperator: two draws from continuous Beta distributions do not tie
  const leader = drawn.reduce((best, c) => (c.draw > best.draw ? c : best));
  const candidates = drawn.map(({ input, runs, successes, alpha, beta, draw }): CostAwareCandidate => {
    const belowLeader = input === leader.input ? null : betaCdf(leader.draw - settings.tolerance, alpha, beta);
    return {
      name: input.name,
      runs,
      successes,
      alpha,
      beta,
      draw,
      expectedCostUsd: expectedCost(input.history, 'costUsd'),
      expectedSimulatedCostUsd: expectedCost(input.history, 'simulatedCostUsd'),
      belowLeader,
      eligible: belowLeader === null || belowLeader < settings.confidence || draw >= leader.draw - settings.tolerance,
    };
  });

  const warming = inputs
    // Stryker disable next-line OptionalChaining: drawn has one entry per input
    .map((input, i) => ({ input, i, runs: drawn[i]?.runs ?? 0 }))
    .filter((c) => c.runs < COST_AWARE_MIN_RUNS);
  if (warming.length > 0) {
    const next = warming.reduce((a, b) => (compareWarmUp(b, a) < 0 ? b : a));
    return { chosen: next.input.name, leader: leader.input.name, reason: 'warm_up', candidates };
  }
  let winner: CostAwareCandidate | undefined;
  for (const c of candidates) if (c.eligible && (winner === undefined || compareCost(c, winner) < 0)) winner = c;
  const chosen = (winner as CostAwareCandidate).name;
  const reason = chosen === leader.input.name ? 'leader_cheapest' : 'cheaper_within_tolerance';
  return { chosen, leader: leader.input.name, reason, candidates };
}

function expectedCost(history: AgentRunSums | undefined, field: 'costUsd' | 'simulatedCostUsd'): number | null {
  return history && history.runs > 0 ? history[field] / history.runs : null;
}

/** Fewer runs first, then the lower list price (unknown last). */
function compareWarmUp(a: { input: CostAwareInput; runs: number }, b: { input: CostAwareInput; runs: number }): number {
  if (a.runs !== b.runs) return a.runs - b.runs;
  return (a.input.listPrice ?? Number.POSITIVE_INFINITY) - (b.input.listPrice ?? Number.POSITIVE_INFINITY) || 0;
}

/** Real money first; simulated money only between candidates that cost the same real money. */
function compareCost(a: CostAwareCandidate, b: CostAwareCandidate): number {
  const real = (a.expectedCostUsd ?? 0) - (b.expectedCostUsd ?? 0);
  if (real !== 0) return real;
  return (a.expectedSimulatedCostUsd ?? 0) - (b.expectedSimulatedCostUsd ?? 0);
}

/** Where a selection's counterfactual comes from: the best-quality candidate by the record so far. */
export interface QualityReference {
  name: string;
  successRate: number;
  expectedCostUsd: number;
  expectedSimulatedCostUsd: number;
}

/**
 * The best-quality candidate (docs/workflows.md#counterfactual-savings): the highest observed success
 * rate among candidates with at least COST_AWARE_MIN_RUNS runs (ties: more runs, then the earlier);
 * null when none has that many.
 */
export function qualityReference(
  names: readonly string[],
  history: ReadonlyMap<string, AgentRunSums>,
): QualityReference | null {
  let best: QualityReference | null = null;
  let bestRuns = 0;
  for (const name of names) {
    const sums = history.get(name);
    if (sums === undefined || sums.runs < COST_AWARE_MIN_RUNS) continue;
    const successRate = sums.successes / sums.runs;
    if (best === null || successRate > best.successRate || (successRate === best.successRate && sums.runs > bestRuns)) {
      best = {
        name,
        successRate,
        expectedCostUsd: sums.costUsd / sums.runs,
        expectedSimulatedCostUsd: sums.simulatedCostUsd / sums.runs,
      };
      bestRuns = sums.runs;
    }
  }
  return best;
}

export interface SelectionSavings {
  reference: string | null;
  savedUsd: number | null;
  savedSimulatedUsd: number | null;
}

/**
 * What a selection saved against the best-quality candidate (docs/workflows.md#counterfactual-savings):
 * the reference's expected cost per run minus the chosen candidate's, real and simulated money
 * apart, from the history the selection scored by. Expected against expected, so the savings of a
 * run's several selections add up; 0 when the reference was chosen, null when either cost is unknown.
 */
export function selectionSavings(
  names: readonly string[],
  history: ReadonlyMap<string, AgentRunSums>,
  chosen: string,
): SelectionSavings {
  const reference = qualityReference(names, history);
  if (reference === null) return { reference: null, savedUsd: null, savedSimulatedUsd: null };
  if (reference.name === chosen) return { reference: reference.name, savedUsd: 0, savedSimulatedUsd: 0 };
  const own = history.get(chosen);
  if (own === undefined || own.runs === 0)
    return { reference: reference.name, savedUsd: null, savedSimulatedUsd: null };
  return {
    reference: reference.name,
    savedUsd: round8(reference.expectedCostUsd - own.costUsd / own.runs),
    savedSimulatedUsd: round8(reference.expectedSimulatedCostUsd - own.simulatedCostUsd / own.runs),
  };
}

/** Costs of one run are fractions of a cent: 8 decimals, as the efficiency record keeps them. */
export const round8 = (value: number): number => Math.round(value * 100_000_000) / 100_000_000;
