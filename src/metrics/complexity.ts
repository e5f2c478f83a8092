import type { Complexity, Task, TaskSignal } from '../domain/task.js';

/**
 * Task complexity (docs/design.md#complexity-allocation-selection-and-review, loki-mode's
 * `classify_task_complexity`): the declared complexity,
 * else the sum of the signal weights, else a file-scope signal derived from the tree's size.
 */

export const SIGNAL_WEIGHTS: Readonly<Record<TaskSignal, number>> = {
  single_file: -1,
  few_files: 0,
  many_files: 1,
  system_wide: 2,
  typo_fix: -2,
  bug_fix: 0,
  feature: 1,
  refactor: 1,
  architecture: 2,
  documentation: -1,
  tests_only: 0,
  frontend: 0,
  backend: 0,
  full_stack: 1,
  infrastructure: 1,
  security: 2,
};

/** ≤ −2 trivial, ≤ 0 simple, ≤ 2 moderate, ≤ 4 complex, else critical. */
export function complexityFromScore(score: number): Complexity {
  if (score <= -2) return 'trivial';
  if (score <= 0) return 'simple';
  if (score <= 2) return 'moderate';
  if (score <= 4) return 'complex';
  return 'critical';
}

export function signalScore(signals: readonly TaskSignal[]): number {
  // A signal counts once, like the seed's `task.has_signal`.
  let score = 0;
  for (const signal of new Set(signals)) score += SIGNAL_WEIGHTS[signal];
  return score;
}

/** The file-scope signal a tree of `promptNodeCount` prompts stands for: 1 → single_file, 2–5, 6–20, > 20. */
export function scopeSignalOf(promptNodeCount: number): TaskSignal {
  if (promptNodeCount <= 1) return 'single_file';
  if (promptNodeCount <= 5) return 'few_files';
  if (promptNodeCount <= 20) return 'many_files';
  return 'system_wide';
}

export interface ComplexityClassification {
  complexity: Complexity;
  source: 'declared' | 'signals' | 'tree';
  /** The signals that were summed (none when declared). */
  signals: TaskSignal[];
  score: number | null;
}

/** The classification with its reasons (the `POST /v1/complexity/classify` dry run shows them). */
export function explainComplexity(task: Task | undefined, promptNodeCount: number): ComplexityClassification {
  if (task?.complexity !== undefined)
    return { complexity: task.complexity, source: 'declared', signals: [], score: null };
  if (task?.signals !== undefined && task.signals.length > 0) {
    const score = signalScore(task.signals);
    return { complexity: complexityFromScore(score), source: 'signals', signals: [...new Set(task.signals)], score };
  }
  const signal = scopeSignalOf(promptNodeCount);
  const score = SIGNAL_WEIGHTS[signal];
  return { complexity: complexityFromScore(score), source: 'tree', signals: [signal], score };
}

export function classifyComplexity(task: Task | undefined, promptNodeCount: number): Complexity {
  return explainComplexity(task, promptNodeCount).complexity;
}
