import type {
  DashboardSums,
  DurationCount,
  ModelSums,
  SumCount,
  TaskComplexityGroup,
  TaskModelGroup,
  UsageWindow,
} from '../domain/usage-analytics.js';

/**
 * Adds up the sums of a window's pieces (segmentsOf cuts it into roll-up periods and raw edges):
 * every figure is a sum or a count, so the pieces add exactly; groups come back in the order and
 * with the membership the single query over the raw rows gave (only groups with a task).
 * Driver-free: both stores' analytics use it.
 */

const HOUR_MS = 3_600_000;
const HOURS_PER_DAY = 24;
/** Roll-up grains: UTC hours and UTC days. */
const HOUR = 0;
const DAY = 1;

/**
 * A piece of a window: raw edges (ms, `to` exclusive) or roll-up periods (hour or day numbers, `to`
 * exclusive). SQLite reads the periods from its roll-up tables; PostgreSQL sums the same periods'
 * rows directly, bucketing latencies as the roll-ups do, so both answer alike.
 */
export type Segment =
  | { kind: 'raw'; from: number; to: number }
  | { kind: 'rollup'; grain: typeof HOUR | typeof DAY; from: number; to: number };

/** [from, to) in ms as raw edges and roll-up periods (hour or day numbers, `to` exclusive); empty pieces left out. */
export function segmentsOf({ from, to }: UsageWindow): Segment[] {
  const h0 = Math.ceil(from / HOUR_MS);
  const h1 = Math.floor(to / HOUR_MS);
  if (h0 >= h1) return from < to ? [{ kind: 'raw', from, to }] : [];
  const d0 = Math.ceil(h0 / HOURS_PER_DAY);
  const d1 = Math.floor(h1 / HOURS_PER_DAY);
  const pieces: Segment[] =
    d0 < d1
      ? [
          { kind: 'rollup', grain: HOUR, from: h0, to: d0 * HOURS_PER_DAY },
          { kind: 'rollup', grain: DAY, from: d0, to: d1 },
          { kind: 'rollup', grain: HOUR, from: d1 * HOURS_PER_DAY, to: h1 },
        ]
      : [{ kind: 'rollup', grain: HOUR, from: h0, to: h1 }];
  const edges: Segment[] = [
    { kind: 'raw', from, to: h0 * HOUR_MS },
    ...pieces,
    { kind: 'raw', from: h1 * HOUR_MS, to },
  ];
  return edges.filter((s) => s.from < s.to);
}

/** A roll-up segment's periods as epoch ms, `to` exclusive. */
export function periodMs(grain: typeof HOUR | typeof DAY): number {
  return grain === DAY ? HOUR_MS * HOURS_PER_DAY : HOUR_MS;
}

const sc = (a: SumCount, b: SumCount): SumCount => ({ sum: a.sum + b.sum, count: a.count + b.count });
const byKey = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function mergeGroups<G extends { taskType: string; tasks: number }>(
  lists: G[][],
  keyOf: (g: G) => string,
  add: (a: G, b: G) => G,
): G[] {
  const merged = new Map<string, G>();
  for (const list of lists) {
    for (const g of list) {
      const key = keyOf(g);
      const seen = merged.get(key);
      merged.set(key, seen === undefined ? { ...g } : add(seen, g));
    }
  }
  return [...merged.entries()]
    .filter(([, g]) => g.tasks > 0)
    .sort(([a], [b]) => byKey(a, b))
    .map(([, g]) => g);
}

/** The task type × model groups of a window's pieces, added up (the dashboard's and the patterns'). */
export function addTaskModelGroups(lists: TaskModelGroup[][]): TaskModelGroup[] {
  return mergeGroups<TaskModelGroup>(
    lists,
    (g) => `${g.taskType}\u0000${g.model}`,
    (a, b) => ({
      ...a,
      tasks: a.tasks + b.tasks,
      successes: a.successes + b.successes,
      efficiencyScore: a.efficiencyScore + b.efficiencyScore,
    }),
  );
}

export function addDashboardSums(parts: DashboardSums[]): DashboardSums {
  const [first, ...rest] = parts;
  if (first === undefined) throw new Error('addDashboardSums needs at least one part');
  let t: DashboardSums = first;
  for (const p of rest) {
    t = {
      tasks: t.tasks + p.tasks,
      successes: t.successes + p.successes,
      efficiencyScore: t.efficiencyScore + p.efficiencyScore,
      agentsSpawned: t.agentsSpawned + p.agentsSpawned,
      totalAgentCalls: t.totalAgentCalls + p.totalAgentCalls,
      wallTimeSeconds: t.wallTimeSeconds + p.wallTimeSeconds,
      recoveryRate: sc(t.recoveryRate, p.recoveryRate),
      goalAdherence: sc(t.goalAdherence, p.goalAdherence),
      toolSelection: sc(t.toolSelection, p.toolSelection),
      qualityGates: sc(t.qualityGates, p.qualityGates),
      costUsd: t.costUsd + p.costUsd,
      simulatedCostUsd: t.simulatedCostUsd + p.simulatedCostUsd,
      rewards: {
        count: t.rewards.count + p.rewards.count,
        outcome: t.rewards.outcome + p.rewards.outcome,
        preference: sc(t.rewards.preference, p.rewards.preference),
      },
      toolCalls: sc(t.toolCalls, p.toolCalls),
      retrievalRelevance: sc(t.retrievalRelevance, p.retrievalRelevance),
      guardrails: sc(t.guardrails, p.guardrails),
      cache: {
        hits: t.cache.hits + p.cache.hits,
        tokensSaved: t.cache.tokensSaved + p.cache.tokensSaved,
        costSavedUsd: t.cache.costSavedUsd + p.cache.costSavedUsd,
        simulatedCostSavedUsd: t.cache.simulatedCostSavedUsd + p.cache.simulatedCostSavedUsd,
      },
      byTaskModel: [],
      byTaskComplexity: [],
    };
  }
  return {
    ...t,
    byTaskModel: addTaskModelGroups(parts.map((p) => p.byTaskModel)),
    byTaskComplexity: mergeGroups<TaskComplexityGroup>(
      parts.map((p) => p.byTaskComplexity),
      (g) => `${g.taskType}\u0000${g.complexity}`,
      (a, b) => ({
        ...a,
        tasks: a.tasks + b.tasks,
        successes: a.successes + b.successes,
        efficiencyScore: a.efficiencyScore + b.efficiencyScore,
        wallTimeSeconds: a.wallTimeSeconds + b.wallTimeSeconds,
      }),
    ),
  };
}

function mergeDurations(a: readonly DurationCount[], b: readonly DurationCount[]): DurationCount[] {
  const counts = new Map<number, number>();
  for (const d of [...a, ...b]) counts.set(d.ms, (counts.get(d.ms) ?? 0) + d.calls);
  return [...counts.entries()].map(([ms, calls]) => ({ ms, calls })).sort((x, y) => x.ms - y.ms);
}

/** The models that had a task in the window, by name; their ended calls over every piece. */
export function addModelSums(parts: ModelSums[][]): ModelSums[] {
  return mergeModelSums(parts)
    .filter((m) => m.tasks > 0)
    .sort((a, b) => byKey(a.model, b.model));
}

/** Every model of the pieces, their figures added up (a model in one piece only is left as it is). */
export function mergeModelSums(parts: ModelSums[][]): ModelSums[] {
  const merged = new Map<string, ModelSums>();
  for (const list of parts) {
    for (const m of list) {
      const seen = merged.get(m.model);
      merged.set(
        m.model,
        seen === undefined
          ? m
          : {
              model: m.model,
              simulated: seen.simulated || m.simulated,
              calls: seen.calls + m.calls,
              tokensIn: seen.tokensIn + m.tokensIn,
              tokensOut: seen.tokensOut + m.tokensOut,
              costUsd: seen.costUsd + m.costUsd,
              tasks: seen.tasks + m.tasks,
              successfulTasks: seen.successfulTasks + m.successfulTasks,
              aggregateReward: sc(seen.aggregateReward, m.aggregateReward),
              endedCalls: seen.endedCalls + m.endedCalls,
              failedCalls: seen.failedCalls + m.failedCalls,
              durations: mergeDurations(seen.durations, m.durations),
            },
      );
    }
  }
  return [...merged.values()];
}
