import { describe, expect, it } from 'vitest';
import type { EngagementSums } from '../../../src/domain/tool-analytics.js';
import { autoGuard, engagementReport, underEngagedTools } from '../../../src/metrics/engagement.js';
import { contentWords, retrievalRelevant } from '../../../src/metrics/retrieval-relevance.js';

const sums = (
  model: string,
  runs: number,
  retrievalCalls: number,
  extra: Partial<EngagementSums> = {},
): EngagementSums => ({
  model,
  guarded: false,
  runs,
  retrievalCalls,
  steps: retrievalCalls + runs,
  tasks: runs,
  modelTasks: runs,
  loopExhausted: 0,
  guardInterventions: 0,
  outcomeReward: 0,
  rewarded: 0,
  ...extra,
});

describe('engagement report (docs/design.md#agent-tools)', () => {
  it('reports the seed pilot: 1.33 against 2.33 retrievals per task is −43%', () => {
    const report = engagementReport([sums('sim/opus', 3, 7), sums('sim/qwen', 3, 4)], 'sim/opus');
    expect(report.reference).toBe('sim/opus');
    const qwen = report.models.find((m) => m.model === 'sim/qwen');
    expect(qwen).toMatchObject({ runs: 3, mean_retrieval_calls: 1.3333, gap: -0.4286, gap_percent: -43 });
    expect(report.models.find((m) => m.model === 'sim/opus')).toMatchObject({ gap: 0, gap_percent: 0 });
  });

  it('takes the most engaged model as reference when none is named, and splits guarded runs', () => {
    const report = engagementReport([
      sums('a', 2, 2, { outcomeReward: 1.5, rewarded: 2 }),
      sums('b', 2, 6, { loopExhausted: 1 }),
      sums('a', 2, 4, { guarded: true, guardInterventions: 2 }),
    ]);
    expect(report.reference).toBe('b');
    const a = report.models.find((m) => m.model === 'a');
    expect(a).toMatchObject({
      runs: 4,
      mean_retrieval_calls: 1.5,
      gap: -0.5,
      guard_interventions: 2,
      mean_outcome_reward: 0.75,
    });
    expect(a?.with_guard).toMatchObject({
      runs: 2,
      mean_retrieval_calls: 2,
      guard_interventions: 2,
      mean_outcome_reward: null,
    });
    expect(a?.without_guard).toMatchObject({ runs: 2, mean_retrieval_calls: 1 });
    expect(report.models.find((m) => m.model === 'b')).toMatchObject({ loop_exhausted_rate: 0.5, with_guard: null });
  });

  it('reports per task first (the seed counts retrievals per task), then per run', () => {
    // A task (workflow) with two retrieval prompts is one task of two runs.
    const report = engagementReport([
      sums('a', 4, 6, { tasks: 2, modelTasks: 3 }),
      sums('a', 2, 2, { guarded: true, tasks: 1, modelTasks: 3 }),
    ]);
    const a = report.models[0];
    expect(Object.keys(a ?? {}).slice(1, 4)).toEqual(['tasks', 'mean_retrieval_calls_per_task', 'mean_steps_per_task']);
    expect(a).toMatchObject({ tasks: 3, mean_retrieval_calls_per_task: 2.6667, runs: 6, mean_retrieval_calls: 1.3333 });
    expect(a?.without_guard).toMatchObject({ tasks: 2, mean_retrieval_calls_per_task: 3, mean_steps_per_task: 5 });
    expect(a?.with_guard).toMatchObject({ tasks: 1, mean_retrieval_calls_per_task: 2 });
  });

  it('has no gap without a reference that retrieved', () => {
    expect(engagementReport([sums('a', 1, 0)]).models[0]).toMatchObject({ gap: null, gap_percent: null });
    expect(engagementReport([sums('a', 1, 1)], 'missing').models[0]).toMatchObject({ gap: null });
  });
});

describe('engagement, rule by rule', () => {
  it('lists models by name; the most engaged breaks ties by more runs, then by the earlier name', () => {
    const byMean = engagementReport([sums('m', 2, 4), sums('b', 2, 2), sums('z', 1, 1)]);
    expect(byMean.models.map((m) => m.model)).toEqual(['b', 'm', 'z']);
    expect(byMean.reference).toBe('m');
    // Equal means: more runs wins, wherever it stands; equal runs too: the earlier name.
    expect(engagementReport([sums('few', 1, 2), sums('many', 3, 6)]).reference).toBe('many');
    expect(engagementReport([sums('many', 3, 6), sums('few', 1, 2)]).reference).toBe('many');
    expect(engagementReport([sums('y', 2, 4), sums('x', 2, 4)]).reference).toBe('x');
    expect(engagementReport([sums('x', 2, 4), sums('y', 2, 4)]).reference).toBe('x');
    // A model without runs is never the reference.
    expect(engagementReport([sums('idle', 0, 0), sums('a', 2, 0)]).reference).toBe('a');
    expect(engagementReport([]).reference).toBeNull();
  });

  it('a model without tasks or runs reads 0 per task and has no gap, and no unguarded figures', () => {
    const report = engagementReport(
      [sums('ref', 2, 4), sums('idle', 0, 0, { tasks: 0, modelTasks: 0, guarded: true })],
      'ref',
    );
    const idle = report.models.find((m) => m.model === 'idle');
    expect(idle).toMatchObject({ mean_retrieval_calls_per_task: 0, mean_steps_per_task: 0, gap: null });
    expect(idle?.without_guard).toBeNull();
    expect(engagementReport([sums('ref', 2, 0), sums('a', 2, 3)], 'ref').models[0]?.gap).toBeNull();
  });

  it('no auto guard without a reference, for the reference itself, or at −30% and above', () => {
    expect(autoGuard([], 'a')).toBeNull();
    expect(autoGuard([sums('a', 2, 4), sums('b', 2, 1)], 'a', 'a')).toBeNull();
    expect(autoGuard([sums('a', 2, 4), sums('b', 2, 1)], 'b', 'a')).toMatchObject({ reference: 'a', gap: -0.75 });
    expect(autoGuard([sums('a', 2, 8), sums('b', 2, 6)], 'b')).toBeNull();
    expect(autoGuard([sums('a', 2, 8), sums('b', 0, 0)], 'b')).toBeNull();
  });
});

describe('auto guard', () => {
  const pilot = [sums('sim/opus', 3, 7), sums('sim/qwen', 3, 4)];
  it('guards a model more than 30% below the reference, at the reference mean rounded', () => {
    expect(autoGuard(pilot, 'sim/qwen')).toEqual({ reference: 'sim/opus', gap: -0.4286, minCalls: 2 });
    expect(autoGuard(pilot, 'sim/opus')).toBeNull();
  });

  it('judges by unguarded runs only, and not without evidence', () => {
    const guarded = [...pilot, sums('sim/qwen', 10, 30, { guarded: true })];
    expect(autoGuard(guarded, 'sim/qwen')?.minCalls).toBe(2);
    expect(autoGuard(pilot, 'sim/new')).toBeNull();
    expect(autoGuard([sums('a', 3, 6), sums('b', 3, 5)], 'b')).toBeNull();
  });
});

describe('the tools the description audit rates by behaviour', () => {
  it('retrieve, once some model retrieves more than 30% less than the most engaged', () => {
    // 1.33 against 2.33 per task: −43%.
    expect([...underEngagedTools([sums('sim/opus', 3, 7), sums('sim/qwen', 3, 4)])]).toEqual(['retrieve']);
    // 3 against 4 per run: −25% is not worse than −30%.
    expect([...underEngagedTools([sums('a', 2, 8), sums('b', 2, 6)])]).toEqual([]);
    expect([...underEngagedTools([sums('a', 3, 3)])]).toEqual([]);
    expect([...underEngagedTools([])]).toEqual([]);
  });
});

describe('memory_retrieval_relevant', () => {
  it('needs three distinct content words shared with the answer', () => {
    const chunk = 'The Danube river flows through Vienna and Budapest before the Black Sea.';
    expect(retrievalRelevant([chunk], 'Vienna and Budapest lie on the Danube.')).toBe(true);
    expect(retrievalRelevant([chunk], 'Vienna and Budapest are capitals.')).toBe(false);
    expect(retrievalRelevant(['unrelated text', chunk], 'DANUBE, vienna; budapest')).toBe(true);
    expect(retrievalRelevant([], 'anything')).toBeNull();
  });

  it('ignores stop words and case', () => {
    expect([...contentWords('The THE and Of river, Rivers')]).toEqual(['river', 'rivers']);
    expect(retrievalRelevant(['the and of with from'], 'the and of with from')).toBe(false);
  });

  it('a content word is a letter or digit run of two or more; every part of the stop list counts', () => {
    expect([...contentWords('x 7 42 Ünïcode café-au-lait')]).toEqual(['42', 'ünïcode', 'café', 'au', 'lait']);
    // One stop word from each line of the list, then a repeated word counted once.
    const stopped = 'about during himself ourselves themselves whom might Danube danube';
    expect([...contentWords(stopped)]).toEqual(['danube']);
    // Shared words are distinct: one word repeated three times is one.
    expect(retrievalRelevant(['danube danube danube'], 'danube danube danube')).toBe(false);
    expect(retrievalRelevant(['danube vienna budapest'], 'budapest vienna danube')).toBe(true);
  });
});
