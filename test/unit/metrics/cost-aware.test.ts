import { describe, expect, it } from 'vitest';
import type { AgentRunSums } from '../../../src/domain/agents.js';
import { betaCdf } from '../../../src/metrics/beta.js';
import {
  type CostAwareInput,
  decideCostAware,
  qualityReference,
  selectionSavings,
} from '../../../src/metrics/cost-aware.js';
import { seededRandom } from '../../../src/metrics/selection.js';

const sums = (runs: number, successes: number, costUsd: number, simulatedCostUsd = 0): AgentRunSums => ({
  runs,
  successes,
  rewardSum: 0,
  costUsd,
  simulatedCostUsd,
});
const SETTINGS = { tolerance: 0.03, confidence: 0.9 };
const input = (name: string, history: AgentRunSums | undefined, listPrice: number | null = 1): CostAwareInput => ({
  name,
  history,
  listPrice,
});

describe('Beta CDF', () => {
  it('matches closed forms and a tabulated value', () => {
    expect(betaCdf(0.5, 2, 3)).toBeCloseTo(0.6875, 12);
    expect(betaCdf(0.3, 1, 5)).toBeCloseTo(1 - 0.7 ** 5, 12);
    expect(betaCdf(0.9, 4, 1)).toBeCloseTo(0.9 ** 4, 12);
    expect(betaCdf(0.5, 100, 100)).toBeCloseTo(0.5, 10);
    expect(betaCdf(0.37, 7.5, 2.25)).toBeCloseTo(1 - betaCdf(0.63, 2.25, 7.5), 12);
    expect([betaCdf(-1, 2, 2), betaCdf(0, 2, 2), betaCdf(1, 2, 2), betaCdf(2, 2, 2)]).toEqual([0, 0, 1, 1]);
  });

  it('matches reference values (scipy.special.betainc) on both sides of the mean, for small and large shapes', () => {
    expect(betaCdf(0.37, 7.5, 2.25)).toBeCloseTo(0.004597006614199539, 12);
    expect(betaCdf(0.97, 30, 2)).toBeCloseTo(0.7619134302319994, 12);
    expect(betaCdf(0.9, 2, 3)).toBeCloseTo(0.9963, 12);
    // Many terms of the continued fraction, far into a tail.
    expect(betaCdf(0.4, 200, 300)).toBeCloseTo(0.5024286163199315, 10);
    expect(betaCdf(0.3, 200, 300) / 1.049698524329301e-6).toBeCloseTo(1, 9);
    // Shapes below 1/2 take ln Γ through its reflection formula.
    expect(betaCdf(0.2, 0.3, 1)).toBeCloseTo(0.2 ** 0.3, 12);
    expect(betaCdf(0.9, 1, 0.4)).toBeCloseTo(1 - 0.1 ** 0.4, 12);
    expect(betaCdf(0.5, 0.25, 0.25)).toBeCloseTo(0.5, 12);
    expect(betaCdf(0.25, 0.5, 0.5)).toBeCloseTo(1 / 3, 12);
  });
});

describe('cost_aware', () => {
  it('warm-up: the candidate with the fewest runs, then the lower list price, then the earlier', () => {
    const random = seededRandom(1);
    const decide = (inputs: CostAwareInput[]) => decideCostAware(inputs, SETTINGS, random);
    expect(decide([input('top', undefined, 90), input('cheap', undefined, 1.5)])).toMatchObject({
      chosen: 'cheap',
      reason: 'warm_up',
    });
    expect(decide([input('top', sums(2, 2, 0.2), 90), input('cheap', sums(3, 0, 0.01), 1.5)]).chosen).toBe('top');
    expect(decide([input('a', undefined, null), input('b', undefined, null)]).chosen).toBe('a');
    expect(decide([input('a', undefined, null), input('b', undefined, 5)]).chosen).toBe('b');
  });

  it('a cheaper candidate within tolerance of the leader wins; a far worse one is ruled out', () => {
    const random = seededRandom(2);
    const good = { cheap: 0, top: 0 };
    const bad = { cheap: 0, top: 0 };
    for (let i = 0; i < 200; i++) {
      // Cheap 48 of 50 vs top 49 of 50: indistinguishable within 3 points.
      const a = decideCostAware(
        [input('top', sums(50, 49, 3.3)), input('cheap', sums(50, 48, 0.06))],
        SETTINGS,
        random,
      );
      good[a.chosen as 'cheap' | 'top']++;
      // Cheap 10 of 50 vs top 47 of 50: far worse.
      const b = decideCostAware(
        [input('top', sums(50, 47, 3.3)), input('cheap', sums(50, 10, 0.06))],
        SETTINGS,
        random,
      );
      bad[b.chosen as 'cheap' | 'top']++;
    }
    expect(good.cheap).toBeGreaterThan(190);
    expect(bad.top).toBe(200);
  });

  it('reports every candidate’s posterior, draw, expected costs and eligibility; the leader is never ruled out', () => {
    const d = decideCostAware(
      [input('top', sums(20, 19, 1.0, 0.5)), input('cheap', sums(20, 2, 0.02, 0.01))],
      SETTINGS,
      seededRandom(3),
    );
    expect(d).toMatchObject({ chosen: 'top', leader: 'top', reason: 'leader_cheapest' });
    const [top, cheap] = d.candidates;
    expect(top).toMatchObject({ name: 'top', runs: 20, successes: 19, alpha: 20, beta: 2, belowLeader: null });
    expect(top?.eligible).toBe(true);
    expect(top?.expectedCostUsd).toBeCloseTo(0.05, 12);
    expect(top?.expectedSimulatedCostUsd).toBeCloseTo(0.025, 12);
    expect(cheap).toMatchObject({ alpha: 3, beta: 19, eligible: false });
    expect(cheap?.belowLeader).toBeCloseTo(betaCdf((top?.draw ?? 0) - 0.03, 3, 19), 12);
    expect(cheap?.belowLeader).toBeGreaterThan(0.9);
  });

  it('ranks by real money first, simulated money only between equal real costs', () => {
    const d = decideCostAware(
      [input('a', sums(10, 10, 0, 0.5)), input('b', sums(10, 10, 0, 0.1)), input('c', sums(10, 10, 0.001, 0))],
      { tolerance: 0.5, confidence: 0.999 },
      seededRandom(4),
    );
    expect(d.chosen).toBe('b');
  });

  it('a wider tolerance or a higher confidence keeps the cheap candidate longer', () => {
    const rate = (settings: typeof SETTINGS) => {
      const random = seededRandom(5);
      let cheap = 0;
      for (let i = 0; i < 400; i++) {
        const inputs = [input('top', sums(30, 29, 3)), input('cheap', sums(30, 25, 0.05))];
        if (decideCostAware(inputs, settings, random).chosen === 'cheap') cheap++;
      }
      return cheap;
    };
    const base = rate(SETTINGS);
    expect(rate({ tolerance: 0.1, confidence: 0.9 })).toBeGreaterThan(base);
    expect(rate({ tolerance: 0.03, confidence: 0.99 })).toBeGreaterThan(base);
  });
});

describe('cost_aware, rule by rule', () => {
  it('needs a candidate', () => {
    expect(() => decideCostAware([], SETTINGS, seededRandom(1))).toThrow('no candidates to select from');
  });

  it('the leader is the highest draw wherever it stands; a cheaper winner says so', () => {
    const random = seededRandom(6);
    let cheaperWins = 0;
    for (let i = 0; i < 50; i++) {
      const d = decideCostAware(
        [input('cheap', sums(30, 28, 0.05)), input('mid', sums(30, 29, 1)), input('top', sums(30, 30, 3))],
        SETTINGS,
        random,
      );
      const highest = d.candidates.reduce((best, c) => (c.draw > best.draw ? c : best));
      expect(d.leader).toBe(highest.name);
      expect(d.candidates.find((c) => c.name === d.leader)?.belowLeader).toBeNull();
      expect(d.reason).toBe(d.chosen === d.leader ? 'leader_cheapest' : 'cheaper_within_tolerance');
      if (d.chosen !== d.leader) cheaperWins++;
    }
    expect(cheaperWins).toBeGreaterThan(0);
  });

  it('warm-up: fewer runs before a lower price; a candidate without runs has no expected cost', () => {
    const d = decideCostAware(
      [input('dear', sums(0, 0, 0), 90), input('cheap', sums(1, 1, 0.5), 1)],
      SETTINGS,
      seededRandom(7),
    );
    expect(d.chosen).toBe('dear');
    expect(d.candidates[0]).toMatchObject({ expectedCostUsd: null, expectedSimulatedCostUsd: null });
    expect(d.candidates[1]).toMatchObject({ expectedCostUsd: 0.5, expectedSimulatedCostUsd: 0 });
    expect(
      decideCostAware([input('a', sums(2, 2, 0), 5), input('b', sums(1, 0, 0), 90)], SETTINGS, seededRandom(7)).chosen,
    ).toBe('b');
  });

  it('equal money: the earlier candidate; the cheaper simulated money wins whichever comes first', () => {
    const wide = { tolerance: 0.5, confidence: 0.999 };
    const same = decideCostAware([input('a', sums(10, 10, 0.1)), input('b', sums(10, 10, 0.1))], wide, seededRandom(8));
    expect(same.chosen).toBe('a');
    const sim = decideCostAware(
      [input('low', sums(10, 10, 0, 0.1)), input('high', sums(10, 10, 0, 0.5))],
      wide,
      seededRandom(8),
    );
    expect(sim.chosen).toBe('low');
  });
});

describe('counterfactual savings', () => {
  it('the reference is the best observed success rate among candidates with ≥ 3 runs', () => {
    const history = new Map([
      ['cheap', sums(20, 19, 0.1)],
      ['top', sums(4, 4, 0.5)],
      ['new', sums(2, 2, 0)],
    ]);
    expect(qualityReference(['cheap', 'top', 'new'], history)).toEqual({
      name: 'top',
      successRate: 1,
      expectedCostUsd: 0.125,
      expectedSimulatedCostUsd: 0,
    });
    // Equal rates: more runs wins.
    const tie = new Map([
      ['a', sums(4, 4, 0)],
      ['b', sums(8, 8, 0)],
    ]);
    expect(qualityReference(['a', 'b'], tie)?.name).toBe('b');
    expect(qualityReference(['b', 'a'], tie)?.name).toBe('b');
    // Equal rates and runs: the earlier; a better rate wins with fewer runs.
    expect(qualityReference(['a', 'c'], new Map([...tie, ['c', sums(4, 4, 0)]]))?.name).toBe('a');
    expect(qualityReference(['b', 'd'], new Map([...tie, ['d', sums(3, 3, 0)], ['b', sums(8, 7, 0)]]))?.name).toBe('d');
    expect(qualityReference(['new'], history)).toBeNull();
  });

  it('saved: the reference’s expected cost per run minus the chosen one’s; 0 when chosen; null when unknown', () => {
    const history = new Map([
      ['cheap', sums(20, 19, 0.1, 0.2)],
      ['top', sums(4, 4, 0.4, 0)],
    ]);
    expect(selectionSavings(['cheap', 'top'], history, 'cheap')).toEqual({
      reference: 'top',
      savedUsd: 0.095,
      savedSimulatedUsd: -0.01,
    });
    expect(selectionSavings(['cheap', 'top'], history, 'top')).toEqual({
      reference: 'top',
      savedUsd: 0,
      savedSimulatedUsd: 0,
    });
    expect(selectionSavings(['cheap', 'top', 'new'], history, 'new')).toEqual({
      reference: 'top',
      savedUsd: null,
      savedSimulatedUsd: null,
    });
    expect(selectionSavings(['x'], new Map(), 'x')).toEqual({
      reference: null,
      savedUsd: null,
      savedSimulatedUsd: null,
    });
  });
});
