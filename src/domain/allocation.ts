import { z } from 'zod';
import { REVIEW_MODES } from './definition.js';
import type { Complexity } from './task.js';

/** The model tiers a role runs on, cheapest first. */
export const TIERS = ['haiku', 'sonnet', 'opus'] as const;
export type Tier = (typeof TIERS)[number];
export const TierSchema = z.enum(TIERS);

/**
 * Agent allocation by complexity (loki-mode's `complexity_allocations`; the table is
 * routing/allocation.ts): how many agents may work at once, which model tier each role runs on, how
 * a change is reviewed, whether parallel steps really run in parallel, and whether a person
 * approves before anything runs.
 */
export const AllocationSchema = z.object({
  max_agents: z.int(),
  /** null: the seed's "no planning needed" (a planning agent then runs on the development tier). */
  planning: TierSchema.nullable(),
  development: TierSchema,
  testing: TierSchema,
  review: z.enum(REVIEW_MODES),
  parallel: z.boolean(),
  human_checkpoint: z.boolean(),
});
export type Allocation = z.infer<typeof AllocationSchema>;

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
