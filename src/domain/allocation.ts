import type { ReviewMode } from './definition.js';
import type { Complexity } from './task.js';

/** A model tier a role runs on. */
export type Tier = 'haiku' | 'sonnet' | 'opus';

/**
 * Agent allocation by complexity (loki-mode's `complexity_allocations`; the table is
 * routing/allocation.ts): how many agents may work at once, which model tier each role runs on, how
 * a change is reviewed, whether parallel steps really run in parallel, and whether a person
 * approves before anything runs.
 */
export interface Allocation {
  max_agents: number;
  /** null: the seed's "no planning needed" (a planning agent then runs on the development tier). */
  planning: Tier | null;
  development: Tier;
  testing: Tier;
  review: ReviewMode;
  parallel: boolean;
  human_checkpoint: boolean;
}

/**
 * A workflow's complexity and the allocation it runs under, settled once when the workflow is
 * planned (docs/design.md#complexity-allocation-selection-and-review) and stored with it. The
 * allocation is null for a bare tree (no declared complexity or signals): it keeps the
 * parallelism and concurrency it was written with.
 */
export interface Routing {
  complexity: Complexity;
  allocation: Allocation | null;
}
