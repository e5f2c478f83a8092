import type { Complexity } from '../domain/task.js';
import type { DashboardSums, SumCount } from '../domain/usage-analytics.js';
import { EFFICIENCY_BASELINES } from './efficiency.js';
import { MIN_PATTERN_TASKS, topPerformingPatterns } from './patterns.js';
import { round } from './run-facts.js';

/**
 * The dashboard (docs/design.md#events-spans-metrics-and-rewards, loki-mode's "Key Metrics Dashboard" and
 * "Multi-Dimensional
 * Evaluation"): the figures of a window, its trends against the previous window of the same length,
 * patterns and areas for improvement by the named rules below, and the four evaluation axes with
 * their coverage. Pure: everything comes from two DashboardSums. The patterns' rule is
 * metrics/patterns.ts (shared with GET /v1/analytics/patterns and planning prompts).
 */

/** areas_for_improvement: mean wall time at least this many times the complexity's baseline time. */
export const SLOW_FACTOR = 2;
/** areas_for_improvement: a task type's mean efficiency score below this. */
export const EFFICIENCY_TARGET = 0.6;
/** areas_for_improvement: a task type's success rate below this. */
export const SUCCESS_TARGET = 0.8;
/** areas_for_improvement: a quality pillar below its target. */
export const PILLAR_TARGETS = {
  tool_selection_accuracy: 0.9,
  tool_reliability_rate: 0.9,
  memory_retrieval_relevance: 0.85,
  policy_adherence: 0.95,
} as const;

const PILLAR_LABELS: Record<keyof typeof PILLAR_TARGETS, string> = {
  tool_selection_accuracy: 'Tool selection accuracy',
  tool_reliability_rate: 'Tool reliability',
  memory_retrieval_relevance: 'Memory retrieval relevance',
  policy_adherence: 'Policy adherence',
};

const ratio = (part: number, whole: number): number | null => (whole === 0 ? null : round(part / whole));
const meanOf = ({ sum, count }: SumCount): number | null => ratio(sum, count);

export interface DashboardSummary {
  tasks_completed: number;
  success_rate: number | null;
  avg_efficiency_score: number | null;
  avg_outcome_reward: number | null;
  avg_preference_reward: number | null;
  avg_recovery_rate: number | null;
  avg_goal_adherence: number | null;
  avg_agents_per_task: number | null;
}

export function dashboardSummary(s: DashboardSums): DashboardSummary {
  return {
    tasks_completed: s.tasks,
    success_rate: ratio(s.successes, s.tasks),
    avg_efficiency_score: ratio(s.efficiencyScore, s.tasks),
    avg_outcome_reward: ratio(s.rewards.outcome, s.rewards.count),
    avg_preference_reward: meanOf(s.rewards.preference),
    avg_recovery_rate: meanOf(s.recoveryRate),
    avg_goal_adherence: meanOf(s.goalAdherence),
    avg_agents_per_task: ratio(s.agentsSpawned, s.tasks),
  };
}

export type QualityPillars = Record<keyof typeof PILLAR_TARGETS, number | null>;

export function qualityPillars(s: DashboardSums): QualityPillars {
  return {
    tool_selection_accuracy: meanOf(s.toolSelection),
    tool_reliability_rate: meanOf(s.toolCalls),
    memory_retrieval_relevance: meanOf(s.retrievalRelevance),
    policy_adherence: meanOf(s.guardrails),
  };
}

export interface TrendFigure {
  current: number | null;
  previous: number | null;
  /** relative: (current − previous) / previous; absolute: current − previous. Null without both. */
  change: number | null;
  kind: 'relative' | 'absolute';
}

export const TREND_KEYS = ['efficiency', 'success_rate', 'avg_agents_per_task', 'recovery_rate'] as const;
export type TrendKey = (typeof TREND_KEYS)[number];

/** "week" for 7 days, "2 weeks" for 14, "3 days" otherwise. */
export function previousLabel(days: number): string {
  if (days === 1) return 'previous day';
  if (days === 7) return 'previous week';
  if (days % 7 === 0) return `previous ${days / 7} weeks`;
  return `previous ${days} days`;
}

function relative(current: number | null, previous: number | null): TrendFigure {
  const change =
    current === null || previous === null || previous === 0 ? null : round((current - previous) / previous);
  return { current, previous, change, kind: 'relative' };
}

function absolute(current: number | null, previous: number | null): TrendFigure {
  const change = current === null || previous === null ? null : round(current - previous);
  return { current, previous, change, kind: 'absolute' };
}

export function trendFigures(current: DashboardSummary, previous: DashboardSummary): Record<TrendKey, TrendFigure> {
  return {
    efficiency: relative(current.avg_efficiency_score, previous.avg_efficiency_score),
    success_rate: relative(current.success_rate, previous.success_rate),
    avg_agents_per_task: absolute(current.avg_agents_per_task, previous.avg_agents_per_task),
    recovery_rate: relative(current.avg_recovery_rate, previous.avg_recovery_rate),
  };
}

const signed = (text: string, value: number): string => (value > 0 ? `+${text}` : text);

/**
 * The seed's display strings: a relative change in whole percent ("+12% vs previous week"); agents
 * per task as a difference with one decimal, fewer being better ("-0.8 (improving)").
 */
export function trendDisplay(key: TrendKey, figure: TrendFigure, days: number): string {
  const label = previousLabel(days);
  if (figure.current === null) return `no data in this window`;
  if (figure.change === null) return `n/a (no data in the ${label})`;
  if (key === 'avg_agents_per_task') {
    const tenths = Math.round(figure.change * 10) / 10;
    const verdict = tenths < 0 ? 'improving' : tenths > 0 ? 'worsening' : 'unchanged';
    return `${signed(tenths.toFixed(1), tenths)} (${verdict})`;
  }
  const percent = Math.round(figure.change * 100);
  // Stryker disable next-line ConditionalExpression: a template literal writes -0 as 0 already
  return `${signed(`${percent === 0 ? 0 : percent}%`, percent)} vs ${label}`;
}

const two = (x: number): string => x.toFixed(2);

/** The rules, in this order: slow task types, low efficiency, low success, pillars below target, axis blind spots. */
export function areasForImprovement(s: DashboardSums, pillars: QualityPillars, axes: EvaluationAxes): string[] {
  const out: string[] = [];
  const byType = new Map<string, { tasks: number; successes: number; efficiency: number }>();
  for (const g of s.byTaskComplexity) {
    const t = byType.get(g.taskType) ?? { tasks: 0, successes: 0, efficiency: 0 };
    t.tasks += g.tasks;
    t.successes += g.successes;
    t.efficiency += g.efficiencyScore;
    byType.set(g.taskType, t);
    if (g.tasks < MIN_PATTERN_TASKS) continue;
    const baseline = EFFICIENCY_BASELINES[g.complexity as Complexity]?.timeSeconds;
    if (baseline === undefined) continue;
    const factor = g.wallTimeSeconds / g.tasks / baseline;
    if (factor >= SLOW_FACTOR)
      out.push(`${g.complexity} ${g.taskType} tasks taking ${factor.toFixed(1)}x expected time`);
  }
  for (const [type, t] of byType) {
    if (t.tasks < MIN_PATTERN_TASKS) continue;
    const efficiency = t.efficiency / t.tasks;
    if (efficiency < EFFICIENCY_TARGET) {
      out.push(`${type} efficiency below baseline (${two(efficiency)} vs ${two(EFFICIENCY_TARGET)} target)`);
    }
    const success = t.successes / t.tasks;
    if (success < SUCCESS_TARGET) out.push(`${type} success rate ${two(success)} below ${two(SUCCESS_TARGET)} target`);
  }
  for (const key of Object.keys(PILLAR_TARGETS) as Array<keyof typeof PILLAR_TARGETS>) {
    const value = pillars[key];
    if (value !== null && value < PILLAR_TARGETS[key]) {
      out.push(`${PILLAR_LABELS[key]} below ${two(PILLAR_TARGETS[key])} target (${two(value)})`);
    }
  }
  for (const axis of Object.values(axes)) {
    const missing = Object.entries(axis.figures).filter(([, v]) => v === null);
    if (missing.length > 0) {
      out.push(
        `${axis.label} axis: ${missing.length} of ${axis.total} figures without data (${missing.map(([k]) => k).join(', ')})`,
      );
    }
  }
  return out;
}

export interface CostFigures {
  real_usd: number;
  simulated_usd: number;
}

export interface EvaluationAxis {
  label: string;
  figures: Record<string, number | CostFigures | null>;
  covered: number;
  total: number;
  /** "covered/total". */
  coverage: string;
}

export const AXES = ['technical', 'human_centered', 'safety', 'economic'] as const;
export type EvaluationAxes = Record<(typeof AXES)[number], EvaluationAxis>;

function axis(label: string, figures: EvaluationAxis['figures']): EvaluationAxis {
  const values = Object.values(figures);
  const covered = values.filter((v) => v !== null).length;
  return { label, figures, covered, total: values.length, coverage: `${covered}/${values.length}` };
}

/**
 * The seed's four axes. Economic figures are per task (agents, wall time) or totals (model calls,
 * cost), null when no task ended in the window; a figure with no data is null and not covered.
 */
export function evaluationAxes(s: DashboardSums, summary: DashboardSummary, pillars: QualityPillars): EvaluationAxes {
  const any = s.tasks > 0;
  return {
    technical: axis('Technical', {
      success_rate: summary.success_rate,
      efficiency_score: summary.avg_efficiency_score,
      recovery_rate: summary.avg_recovery_rate,
    }),
    human_centered: axis('Human-centered', {
      preference_reward: summary.avg_preference_reward,
      goal_adherence: summary.avg_goal_adherence,
    }),
    safety: axis('Safety', {
      policy_adherence: pillars.policy_adherence,
      quality_gates_passed: meanOf(s.qualityGates),
    }),
    economic: axis('Economic', {
      model_usage: any ? s.totalAgentCalls : null,
      agents_spawned: summary.avg_agents_per_task,
      wall_time: ratio(s.wallTimeSeconds, s.tasks),
      cost: any ? costOf(s) : null,
    }),
  };
}

export function costOf(s: DashboardSums): CostFigures {
  return { real_usd: round(s.costUsd, 8), simulated_usd: round(s.simulatedCostUsd, 8) };
}

export interface CacheSavings {
  hits: number;
  /** hits / (hits + logical model calls): the share of answers the cache served. */
  hit_rate: number | null;
  tokens_saved: number;
  cost_saved_usd: number;
  simulated_cost_saved_usd: number;
}

export function cacheSavings(s: DashboardSums): CacheSavings {
  return {
    hits: s.cache.hits,
    hit_rate: ratio(s.cache.hits, s.cache.hits + s.totalAgentCalls),
    tokens_saved: s.cache.tokensSaved,
    cost_saved_usd: round(s.cache.costSavedUsd, 8),
    simulated_cost_saved_usd: round(s.cache.simulatedCostSavedUsd, 8),
  };
}

/** The whole dashboard of a window (`current`) against the window of the same length before it. */
export function buildDashboard(current: DashboardSums, previous: DashboardSums, days: number) {
  const summary = dashboardSummary(current);
  const previousSummary = dashboardSummary(previous);
  const pillars = qualityPillars(current);
  const figures = trendFigures(summary, previousSummary);
  const trends = Object.fromEntries(TREND_KEYS.map((key) => [key, trendDisplay(key, figures[key], days)])) as Record<
    TrendKey,
    string
  >;
  const axes = evaluationAxes(current, summary, pillars);
  return {
    period: `rolling_${days}_days`,
    summary,
    previous_summary: previousSummary,
    quality_pillars: pillars,
    trends,
    trend_figures: figures,
    top_performing_patterns: topPerformingPatterns(current.byTaskModel).map((p) => p.text),
    areas_for_improvement: areasForImprovement(current, pillars, axes),
    cost: costOf(current),
    previous_cost: costOf(previous),
    cache: cacheSavings(current),
    evaluation_axes: axes,
  };
}
