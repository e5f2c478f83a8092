import type { TaskModelGroup } from '../domain/usage-analytics.js';
import { round } from './run-facts.js';

/**
 * Top performing patterns (loki-mode's dashboard `top_performing_patterns` and its ADAPT step,
 * "store successful patterns"): task type × model groups that succeed and run efficiently. One
 * rule for the dashboard, GET /v1/analytics/patterns and the block planning prompts are shown
 * (docs/analytics.md#successful-patterns). Pure: everything comes from the groups' sums.
 */

/** A group (task type × model, task type × complexity) needs this many tasks before a rule judges it. */
export const MIN_PATTERN_TASKS = 5;
/** A task type × model group at or above both is a pattern. */
export const TOP_SUCCESS_RATE = 0.9;
export const TOP_EFFICIENCY = 0.7;
export const MAX_PATTERNS = 5;
/** The window a planning prompt's patterns are read over at submission: the dashboard's default. */
export const PATTERN_WINDOW_DAYS = 7;

export interface PerformingPattern {
  task_type: string;
  model: string;
  tasks: number;
  success_rate: number;
  avg_efficiency: number;
  /** The dashboard's display string: "sim/haiku for unit-tests (0.95 success, 0.92 efficiency)". */
  text: string;
}

const two = (x: number): string => x.toFixed(2);

/**
 * Groups (of `taskType` only, when given) with at least MIN_PATTERN_TASKS tasks, success ≥
 * TOP_SUCCESS_RATE and efficiency ≥ TOP_EFFICIENCY; best first, at most MAX_PATTERNS.
 */
export function topPerformingPatterns(groups: readonly TaskModelGroup[], taskType?: string): PerformingPattern[] {
  return groups
    .filter((g) => g.tasks >= MIN_PATTERN_TASKS && (taskType === undefined || g.taskType === taskType))
    .map((g) => ({ ...g, success: g.successes / g.tasks, efficiency: g.efficiencyScore / g.tasks }))
    .filter((g) => g.success >= TOP_SUCCESS_RATE && g.efficiency >= TOP_EFFICIENCY)
    .sort((a, b) => b.success - a.success || b.efficiency - a.efficiency || b.tasks - a.tasks)
    .slice(0, MAX_PATTERNS)
    .map((g) => ({
      task_type: g.taskType,
      model: g.model,
      tasks: g.tasks,
      success_rate: round(g.success),
      avg_efficiency: round(g.efficiency),
      text: `${g.model} for ${g.taskType} (${two(g.success)} success, ${two(g.efficiency)} efficiency)`,
    }));
}
