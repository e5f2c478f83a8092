import { describe, expect, it } from 'vitest';
import type { TaskSignal } from '../../../src/domain/task.js';
import {
  classifyComplexity,
  complexityFromScore,
  explainComplexity,
  scopeSignalOf,
  signalScore,
} from '../../../src/metrics/complexity.js';

const task = (signals: TaskSignal[]) => ({ type: 'code', signals });

describe('complexity (docs/design.md#complexity-allocation-selection-and-review)', () => {
  it('maps scores at each boundary: ≤−2 trivial, ≤0 simple, ≤2 moderate, ≤4 complex, else critical', () => {
    expect([-5, -2, -1, 0, 1, 2, 3, 4, 5, 9].map(complexityFromScore)).toEqual([
      'trivial',
      'trivial',
      'simple',
      'simple',
      'moderate',
      'moderate',
      'complex',
      'complex',
      'critical',
      'critical',
    ]);
  });

  it.each<[TaskSignal[], number, string]>([
    [['typo_fix'], -2, 'trivial'],
    [['typo_fix', 'single_file'], -3, 'trivial'],
    [['documentation'], -1, 'simple'],
    [['bug_fix', 'backend', 'frontend', 'tests_only', 'few_files'], 0, 'simple'],
    [['feature'], 1, 'moderate'],
    [['security'], 2, 'moderate'],
    [['security', 'feature'], 3, 'complex'],
    [['architecture', 'system_wide'], 4, 'complex'],
    [['security', 'architecture', 'feature'], 5, 'critical'],
    [['many_files', 'refactor', 'full_stack', 'infrastructure'], 4, 'complex'],
  ])('sums signal weights %j = %i → %s', (signals, score, complexity) => {
    expect(signalScore(signals)).toBe(score);
    expect(classifyComplexity(task(signals), 1)).toBe(complexity);
  });

  it('counts a repeated signal once', () => {
    expect(signalScore(['security', 'security', 'feature'])).toBe(3);
  });

  it('prefers the declared complexity over signals and the tree', () => {
    expect(classifyComplexity({ type: 'x', complexity: 'critical', signals: ['typo_fix'] }, 1)).toBe('critical');
    expect(explainComplexity({ type: 'x', complexity: 'trivial' }, 50)).toEqual({
      complexity: 'trivial',
      source: 'declared',
      signals: [],
      score: null,
    });
  });

  it('falls back to the tree: 1 prompt single_file, 2–5 few_files, 6–20 many_files, >20 system_wide', () => {
    expect([0, 1, 2, 5, 6, 20, 21, 200].map(scopeSignalOf)).toEqual([
      'single_file',
      'single_file',
      'few_files',
      'few_files',
      'many_files',
      'many_files',
      'system_wide',
      'system_wide',
    ]);
    // single_file −1 → simple, few_files 0 → simple, many_files +1 → moderate, system_wide +2 → moderate
    expect([1, 5, 6, 20, 21].map((n) => classifyComplexity(undefined, n))).toEqual([
      'simple',
      'simple',
      'moderate',
      'moderate',
      'moderate',
    ]);
    expect(classifyComplexity({ type: 'x', signals: [] }, 7)).toBe('moderate');
    expect(explainComplexity(undefined, 7)).toEqual({
      complexity: 'moderate',
      source: 'tree',
      signals: ['many_files'],
      score: 1,
    });
  });
});
