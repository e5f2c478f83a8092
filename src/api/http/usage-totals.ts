import { z } from 'zod';
import type { GenerationUsage } from '../../domain/spans.js';

/**
 * The totals a person looks for first (how long, how many calls, how many tokens, what it cost),
 * own and with the child workflows below, summed from the generation spans committed so far: live
 * while the workflow runs. Real and simulated money are never added together (docs/design.md#providers-and-models).
 */
export interface UsageFigures {
  providerCalls: number;
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
  simulatedCostUsd: number;
}

const round8 = (value: number): number => Math.round(value * 1e8) / 1e8;

function sum(rows: readonly GenerationUsage[]): UsageFigures {
  const total: UsageFigures = { providerCalls: 0, tokensIn: 0, tokensOut: 0, costUsd: 0, simulatedCostUsd: 0 };
  for (const row of rows) {
    total.providerCalls += row.calls;
    total.tokensIn += row.tokensIn;
    total.tokensOut += row.tokensOut;
    total.costUsd += row.costUsd;
    total.simulatedCostUsd += row.simulatedCostUsd;
  }
  total.costUsd = round8(total.costUsd);
  total.simulatedCostUsd = round8(total.simulatedCostUsd);
  return total;
}

/** `subtree`: the workflow and every descendant whose figures count "with children". */
export function usageTotals(
  rows: readonly GenerationUsage[],
  workflowId: string,
  subtree: ReadonlySet<string>,
): { own: UsageFigures; withChildren: UsageFigures } {
  return {
    own: sum(rows.filter((r) => r.workflowId === workflowId)),
    withChildren: sum(rows.filter((r) => subtree.has(r.workflowId))),
  };
}

/** Milliseconds from start to end, or to now while running; null before it started. */
export function liveDuration(startedAt: number | null, endedAt: number | null, now: number): number | null {
  if (startedAt === null) return null;
  return Math.max(0, (endedAt ?? now) - startedAt);
}

const figures = {
  providerCalls: z.int().describe('Provider calls made (cache hits excluded; calls in flight included).'),
  tokensIn: z.int().describe('Input tokens spent (0 for cache hits).'),
  tokensOut: z.int(),
  costUsd: z.number().describe('Money spent on real providers.'),
  simulatedCostUsd: z.number().describe('What sim/* calls would have cost at their tier price: not money.'),
};

export const TotalsSchema = z
  .object({
    durationMs: z.int().nullable().describe('Start to end, or to now while running; null before it started.'),
    ...figures,
    withChildren: z.object(figures).describe('The same with every child workflow below it.'),
  })
  .describe('Totals');
export type Totals = z.infer<typeof TotalsSchema>;

export function toTotals(usage: { own: UsageFigures; withChildren: UsageFigures }, durationMs: number | null): Totals {
  return { durationMs, ...usage.own, withChildren: usage.withChildren };
}
