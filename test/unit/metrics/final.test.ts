import { describe, expect, it } from 'vitest';
import { metricsChanges, withPending } from '../../../src/metrics/final.js';
import { p, RunBuilder } from './fixtures.js';

describe('final change-set helpers', () => {
  it('merges committed and pending history: new events in seq order, outcomes applied to entries', () => {
    const b = new RunBuilder(p('a')).step('a').call('a').reflection('a', { success: null });
    const [e1, e2, e3, e4] = b.events;
    const [entry] = b.reflections;
    const merged = withPending(
      { events: [e1!, e2!], reflections: [entry!] },
      { events: [e4!, e3!, e2!], reflections: [], reflectionOutcomes: [{ id: entry!.id, success: true }] },
    );
    expect(merged.events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(merged.reflections).toEqual([{ ...entry, success: true }]);
  });

  it('adds the record and the reward with the tenant; a cancelled run gets no reward', () => {
    const done = metricsChanges(new RunBuilder(p('a')).input());
    expect(done.efficiency).toHaveLength(1);
    expect(done.efficiency[0]).toMatchObject({ task_id: 'wf_test', tenant_id: 'acme' });
    expect(done.rewards[0]).toMatchObject({ workflow_id: 'wf_test', tenant_id: 'acme', outcome_reward: 0.3 });
    const cancelled = metricsChanges(new RunBuilder(p('a'), { status: 'cancelled' }).input());
    expect(cancelled.efficiency[0]?.outcome_reason).toBe('timeout_partial_work');
    expect(cancelled.rewards).toEqual([]);
  });

  it('a workflow rejected at its checkpoint is review_blocked and gets no reward (no agent of it ran)', () => {
    // It scored −1 and that reward fed the selection history of its agents.
    const rejected = metricsChanges(
      new RunBuilder(p('a'), {
        status: 'failed',
        error: { code: 'CHECKPOINT_REJECTED', message: 'rejected at the human checkpoint: no' },
        task: { type: 'change', complexity: 'critical' },
      }).input(),
    );
    expect(rejected.efficiency[0]).toMatchObject({ outcome: 'failure', outcome_reason: 'review_blocked' });
    expect(rejected.rewards).toEqual([]);
  });
});
