import { describe, expect, it } from 'vitest';
import { COMPLEXITIES, type Complexity } from '../../../src/domain/task.js';
import { EFFICIENCY_BASELINES, efficiencyScore } from '../../../src/metrics/efficiency.js';

/** 0.5·min(1, T/max(t,1)) + 0.3·min(1, A/max(a,1)) + 0.2·clamp01(1 − r/(R+3)) */
describe('efficiencyScore (docs/design.md#events-spans-metrics-and-rewards)', () => {
  it('uses the seed baselines', () => {
    expect(EFFICIENCY_BASELINES).toEqual({
      trivial: { timeSeconds: 60, agents: 1, retries: 0 },
      simple: { timeSeconds: 180, agents: 2, retries: 0 },
      moderate: { timeSeconds: 600, agents: 4, retries: 1 },
      complex: { timeSeconds: 1800, agents: 8, retries: 2 },
      critical: { timeSeconds: 3600, agents: 12, retries: 3 },
    });
  });

  // At baseline the time and agent terms are 1; the retry term is 1 − R/(R+3).
  it.each<[Complexity, number]>([
    ['trivial', 1], // 0.5 + 0.3 + 0.2·1
    ['simple', 1], // 0.5 + 0.3 + 0.2·1
    ['moderate', 0.95], // 0.5 + 0.3 + 0.2·(3/4)
    ['complex', 0.92], // 0.5 + 0.3 + 0.2·(3/5)
    ['critical', 0.9], // 0.5 + 0.3 + 0.2·(3/6)
  ])('%s at baseline → %d', (complexity, expected) => {
    const b = EFFICIENCY_BASELINES[complexity];
    const score = efficiencyScore(complexity, {
      wallTimeSeconds: b.timeSeconds,
      agentsSpawned: b.agents,
      retryCount: b.retries,
    });
    expect(score).toBeCloseTo(expected, 10);
  });

  it.each(COMPLEXITIES)('%s above baseline (faster, fewer agents, no retry) is capped at 1', (complexity) => {
    const b = EFFICIENCY_BASELINES[complexity];
    expect(efficiencyScore(complexity, { wallTimeSeconds: b.timeSeconds / 2, agentsSpawned: 1, retryCount: 0 })).toBe(
      1,
    );
  });

  // Twice the time and agents: 0.25 + 0.15; r = R+1 retries: 0.2·(2/(R+3)).
  it.each<[Complexity, number]>([
    ['trivial', 0.4 + 0.2 * (2 / 3)],
    ['simple', 0.4 + 0.2 * (2 / 3)],
    ['moderate', 0.5],
    ['complex', 0.48],
    ['critical', 0.4 + 0.2 / 3],
  ])('%s below baseline (2×T, 2×A, R+1 retries) → %d', (complexity, expected) => {
    const b = EFFICIENCY_BASELINES[complexity];
    const score = efficiencyScore(complexity, {
      wallTimeSeconds: 2 * b.timeSeconds,
      agentsSpawned: 2 * b.agents,
      retryCount: b.retries + 1,
    });
    expect(score).toBeCloseTo(expected, 10);
  });

  it.each(COMPLEXITIES)('%s with R+3 or more retries gets no retry credit (never negative)', (complexity) => {
    const b = EFFICIENCY_BASELINES[complexity];
    const at = { wallTimeSeconds: 2 * b.timeSeconds, agentsSpawned: 2 * b.agents };
    expect(efficiencyScore(complexity, { ...at, retryCount: b.retries + 3 })).toBeCloseTo(0.4, 10);
    expect(efficiencyScore(complexity, { ...at, retryCount: 1000 })).toBeCloseTo(0.4, 10);
  });

  it('worked: moderate, 1200 s, 8 agents, 2 retries → 0.25 + 0.15 + 0.1 = 0.5', () => {
    expect(efficiencyScore('moderate', { wallTimeSeconds: 1200, agentsSpawned: 8, retryCount: 2 })).toBeCloseTo(
      0.5,
      10,
    );
  });

  it.each(COMPLEXITIES)('%s never leaves [0, 1] on extreme inputs', (complexity) => {
    const cases = [
      { wallTimeSeconds: 0, agentsSpawned: 0, retryCount: 0 },
      { wallTimeSeconds: -10, agentsSpawned: -3, retryCount: -5 },
      { wallTimeSeconds: 1e12, agentsSpawned: 1e9, retryCount: 1e9 },
      { wallTimeSeconds: Number.POSITIVE_INFINITY, agentsSpawned: Number.POSITIVE_INFINITY, retryCount: 1e308 },
      { wallTimeSeconds: Number.NaN, agentsSpawned: Number.NaN, retryCount: Number.NaN },
      { wallTimeSeconds: 0.001, agentsSpawned: 1, retryCount: 0 },
    ];
    for (const input of cases) {
      const score = efficiencyScore(complexity, input);
      expect(score).toBeGreaterThanOrEqual(0);
      expect(score).toBeLessThanOrEqual(1);
      expect(Number.isNaN(score)).toBe(false);
    }
    expect(efficiencyScore(complexity, cases[0]!)).toBe(1);
    expect(efficiencyScore(complexity, cases[3]!)).toBe(0);
  });
});
