import { describe, expect, it } from 'vitest';
import { COMPLEXITIES } from '../../../src/domain/task.js';
import { COMPLEXITY_ALLOCATIONS, reviewPanel, tierFor } from '../../../src/routing/allocation.js';

describe('allocation by complexity (the loki-mode table)', () => {
  it('is the seed table, level by level', () => {
    const rows = COMPLEXITIES.map((c) => {
      const a = COMPLEXITY_ALLOCATIONS[c];
      return [c, a.max_agents, a.planning, a.development, a.testing, a.review, a.parallel, a.human_checkpoint];
    });
    expect(rows).toEqual([
      ['trivial', 1, null, 'haiku', 'haiku', 'skip', false, false],
      ['simple', 2, null, 'haiku', 'haiku', 'single', false, false],
      ['moderate', 4, 'sonnet', 'sonnet', 'haiku', 'standard', true, false],
      ['complex', 8, 'opus', 'sonnet', 'haiku', 'deep', true, false],
      ['critical', 12, 'opus', 'sonnet', 'sonnet', 'exhaustive', true, true],
    ]);
  });

  it('gives each role its tier; reviewers always sonnet; planning without planning runs as development', () => {
    const table = COMPLEXITIES.map((c) =>
      (['planning', 'development', 'testing', 'review'] as const).map((role) => tierFor(role, c)),
    );
    expect(table).toEqual([
      ['haiku', 'haiku', 'haiku', 'sonnet'],
      ['haiku', 'haiku', 'haiku', 'sonnet'],
      ['sonnet', 'sonnet', 'haiku', 'sonnet'],
      ['opus', 'sonnet', 'haiku', 'sonnet'],
      ['opus', 'sonnet', 'sonnet', 'sonnet'],
    ]);
  });

  it('sizes review panels: skip 0, single 1, standard 3, deep 3 + devil’s advocate, exhaustive deep twice', () => {
    expect(['skip', 'single', 'standard', 'deep', 'exhaustive'].map((m) => reviewPanel(m as never))).toEqual([
      { reviewers: 0, devilsAdvocate: false, rounds: 0 },
      { reviewers: 1, devilsAdvocate: false, rounds: 1 },
      { reviewers: 3, devilsAdvocate: false, rounds: 1 },
      { reviewers: 3, devilsAdvocate: true, rounds: 1 },
      { reviewers: 3, devilsAdvocate: true, rounds: 2 },
    ]);
  });
});
