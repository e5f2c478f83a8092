import type { EngagementSums } from '../domain/tool-analytics.js';

/**
 * Retrieval engagement per model (docs/design.md#agent-tools), from the sums of its retrieval runs: the figures of
 * GET /v1/analytics/retrieval, the relative gap to a reference model (ratio of mean retrieval calls
 * − 1: 1.33 against 2.33 is −43%), and the `auto` guard's decision.
 */

/** A gap worse than this (−30%) makes `guard: {auto: true}` apply, and a tool Tier 2 in the audit. */
export const UNDER_ENGAGEMENT_GAP = -0.3;

export interface EngagementFigures {
  /** Workflows with a retrieval run: the seed's unit (retrievals per task). */
  tasks: number;
  mean_retrieval_calls_per_task: number;
  mean_steps_per_task: number;
  runs: number;
  mean_retrieval_calls: number;
  mean_steps: number;
  loop_exhausted_rate: number;
  /** Mean outcome reward of the runs' workflows; null when none has a reward yet. */
  mean_outcome_reward: number | null;
  guard_interventions: number;
}

export interface ModelEngagement extends EngagementFigures {
  model: string;
  /** Mean retrieval calls against the reference's, minus 1; null without a reference. */
  gap: number | null;
  /** The gap in percent, rounded: −43 for 1.33 against 2.33. */
  gap_percent: number | null;
  /** Runs a guard applied to, and runs without one: the guard's effect, measured. */
  with_guard: EngagementFigures | null;
  without_guard: EngagementFigures | null;
}

export interface EngagementReport {
  /** The model gaps are measured against: the one asked for, else the most engaged. */
  reference: string | null;
  models: ModelEngagement[];
}

type Totals = Omit<EngagementSums, 'model' | 'guarded' | 'modelTasks'>;

const ZERO: Totals = {
  runs: 0,
  tasks: 0,
  retrievalCalls: 0,
  steps: 0,
  loopExhausted: 0,
  guardInterventions: 0,
  outcomeReward: 0,
  rewarded: 0,
};

function add(a: Totals, b: Totals): Totals {
  return {
    runs: a.runs + b.runs,
    tasks: a.tasks + b.tasks,
    retrievalCalls: a.retrievalCalls + b.retrievalCalls,
    steps: a.steps + b.steps,
    loopExhausted: a.loopExhausted + b.loopExhausted,
    guardInterventions: a.guardInterventions + b.guardInterventions,
    outcomeReward: a.outcomeReward + b.outcomeReward,
    rewarded: a.rewarded + b.rewarded,
  };
}

const round = (value: number, digits = 4): number => Number(value.toFixed(digits));

function figures(t: Totals): EngagementFigures {
  return {
    tasks: t.tasks,
    mean_retrieval_calls_per_task: t.tasks === 0 ? 0 : round(t.retrievalCalls / t.tasks),
    mean_steps_per_task: t.tasks === 0 ? 0 : round(t.steps / t.tasks),
    runs: t.runs,
    mean_retrieval_calls: round(t.retrievalCalls / t.runs),
    mean_steps: round(t.steps / t.runs),
    loop_exhausted_rate: round(t.loopExhausted / t.runs),
    mean_outcome_reward: t.rewarded === 0 ? null : round(t.outcomeReward / t.rewarded),
    guard_interventions: t.guardInterventions,
  };
}

/** Totals per model, all runs and split by guard. */
function byModel(sums: readonly EngagementSums[]): Map<string, { all: Totals; guarded: Totals; unguarded: Totals }> {
  const out = new Map<string, { all: Totals; guarded: Totals; unguarded: Totals }>();
  for (const row of sums) {
    const entry = out.get(row.model) ?? { all: ZERO, guarded: ZERO, unguarded: ZERO };
    // A task can have guarded and unguarded runs: the model's own count, not the groups' sum.
    entry.all = { ...add(entry.all, row), tasks: row.modelTasks };
    if (row.guarded) entry.guarded = add(entry.guarded, row);
    else entry.unguarded = add(entry.unguarded, row);
    out.set(row.model, entry);
  }
  return out;
}

const meanCalls = (t: Totals): number => (t.runs === 0 ? 0 : t.retrievalCalls / t.runs);

/** The most engaged model (highest mean retrieval calls; more runs, then the name, break ties). */
function mostEngaged(totals: Map<string, Totals>): string | null {
  let best: { model: string; mean: number; runs: number } | null = null;
  for (const [model, t] of totals) {
    if (t.runs === 0) continue;
    const mean = meanCalls(t);
    if (
      !best ||
      mean > best.mean ||
      (mean === best.mean && (t.runs > best.runs || (t.runs === best.runs && model < best.model)))
    ) {
      best = { model, mean, runs: t.runs };
    }
  }
  return best?.model ?? null;
}

/** Ratio of means − 1; null when the reference has no runs or never retrieved. */
function gapOf(model: Totals, reference: Totals | undefined): number | null {
  if (!reference || reference.runs === 0 || model.runs === 0) return null;
  const ref = meanCalls(reference);
  return ref === 0 ? null : meanCalls(model) / ref - 1;
}

export function engagementReport(sums: readonly EngagementSums[], reference?: string): EngagementReport {
  const models = byModel(sums);
  const all = new Map([...models].map(([m, t]) => [m, t.all]));
  const ref = reference ?? mostEngaged(all);
  const refTotals = ref === null ? undefined : all.get(ref);
  return {
    reference: ref,
    models: [...models]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([model, t]) => {
        const gap = gapOf(t.all, refTotals);
        return {
          model,
          ...figures(t.all),
          gap: gap === null ? null : round(gap),
          gap_percent: gap === null ? null : Math.round(gap * 100),
          with_guard: t.guarded.runs === 0 ? null : figures(t.guarded),
          without_guard: t.unguarded.runs === 0 ? null : figures(t.unguarded),
        };
      }),
  };
}

export interface AutoGuardDecision {
  reference: string;
  /** The model's unguarded gap against the reference. */
  gap: number;
  /** The reference's unguarded mean retrieval calls, rounded (at least 1). */
  minCalls: number;
}

/**
 * `guard: {auto: true}` (docs/design.md#agent-tools): guard `model` when its engagement without a guard is more than
 * 30% below the reference's (both measured on unguarded runs: what the models do on their own).
 * Null when the model is not under-engaging, or either side has no runs to judge by.
 */
export function autoGuard(
  sums: readonly EngagementSums[],
  model: string,
  reference?: string,
): AutoGuardDecision | null {
  const unguarded = new Map([...byModel(sums)].map(([m, t]) => [m, t.unguarded]));
  const ref = reference ?? mostEngaged(unguarded);
  if (ref === null || ref === model) return null;
  const refTotals = unguarded.get(ref);
  const own = unguarded.get(model);
  if (!refTotals || !own) return null;
  const gap = gapOf(own, refTotals);
  if (gap === null || gap >= UNDER_ENGAGEMENT_GAP) return null;
  return { reference: ref, gap: round(gap), minCalls: Math.max(1, Math.round(meanCalls(refTotals))) };
}

/**
 * The tools the description audit rates Tier 2 (behavioural): engagement is measured on retrieval,
 * so `retrieve` is one when some model's gap to the most engaged is worse than −30%.
 */
export function underEngagedTools(sums: readonly EngagementSums[]): Set<string> {
  const { models } = engagementReport(sums);
  return new Set(models.some((m) => m.gap !== null && m.gap < UNDER_ENGAGEMENT_GAP) ? ['retrieve'] : []);
}
