import type { Allocation, Tier } from '../domain/allocation.js';
import type { ReviewMode } from '../domain/definition.js';
import type { AgentRole } from '../domain/names.js';
import type { Complexity } from '../domain/task.js';

/**
 * Agent allocation by complexity (docs/design.md#complexity-allocation-selection-and-review, loki-mode's
 * `complexity_allocations`): how many
 * agents may work at once, which model tier each role runs on, how a change is reviewed, whether
 * parallel steps really run in parallel, and whether a person approves before anything runs.
 */

/** The seed table, exactly. */
export const COMPLEXITY_ALLOCATIONS: Readonly<Record<Complexity, Allocation>> = {
  trivial: {
    max_agents: 1,
    planning: null,
    development: 'haiku',
    testing: 'haiku',
    review: 'skip',
    parallel: false,
    human_checkpoint: false,
  },
  simple: {
    max_agents: 2,
    planning: null,
    development: 'haiku',
    testing: 'haiku',
    review: 'single',
    parallel: false,
    human_checkpoint: false,
  },
  moderate: {
    max_agents: 4,
    planning: 'sonnet',
    development: 'sonnet',
    testing: 'haiku',
    review: 'standard',
    parallel: true,
    human_checkpoint: false,
  },
  complex: {
    max_agents: 8,
    planning: 'opus',
    development: 'sonnet',
    testing: 'haiku',
    review: 'deep',
    parallel: true,
    human_checkpoint: false,
  },
  critical: {
    max_agents: 12,
    planning: 'opus',
    development: 'sonnet',
    testing: 'sonnet',
    review: 'exhaustive',
    parallel: true,
    human_checkpoint: true,
  },
};

/** "Sonnet for reviews (balanced quality/cost)", at every level. */
export const REVIEWER_TIER: Tier = 'sonnet';

/** The tier `model: "auto"` resolves to for an agent of `role` on a task of `complexity`. */
export function tierFor(role: AgentRole, complexity: Complexity): Tier {
  const allocation = COMPLEXITY_ALLOCATIONS[complexity];
  if (role === 'review') return REVIEWER_TIER;
  if (role === 'planning') return allocation.planning ?? allocation.development;
  return allocation[role];
}

export interface ReviewPanel {
  /** Reviewers per round (the devil's advocate not counted). */
  reviewers: number;
  devilsAdvocate: boolean;
  rounds: number;
}

/** single = 1, standard = 3 in parallel, deep = 3 + a devil's advocate, exhaustive = deep twice; skip = none. */
export function reviewPanel(mode: ReviewMode): ReviewPanel {
  switch (mode) {
    case 'skip':
      return { reviewers: 0, devilsAdvocate: false, rounds: 0 };
    case 'single':
      return { reviewers: 1, devilsAdvocate: false, rounds: 1 };
    case 'standard':
      return { reviewers: 3, devilsAdvocate: false, rounds: 1 };
    case 'deep':
      return { reviewers: 3, devilsAdvocate: true, rounds: 1 };
    case 'exhaustive':
      return { reviewers: 3, devilsAdvocate: true, rounds: 2 };
  }
}
