import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EfficiencyRecord, FeedbackAction, RewardRecord } from '../../src/domain/metrics.js';
import type { MetricsStore } from '../../src/domain/ports.js';
import type { Complexity } from '../../src/domain/task.js';
import { summarizeRun } from '../../src/metrics/efficiency.js';
import { rewardFor, withFeedback } from '../../src/metrics/rewards.js';
import { newWorkflow } from '../support/store-fixtures.js';
import { p, RunBuilder } from '../unit/metrics/fixtures.js';
import { METRICS_STORE_ADAPTERS as ADAPTERS, type OpenedMetrics } from './metrics-store-adapters.js';

/**
 * What every MetricsStore adapter promises, through the ports alone: records and rewards committed
 * with the workflow's final state (one transaction) and read back tenant-scoped; lists newest first
 * with keyset cursors that continue across adapters' identical sort keys; sums over the whole
 * filtered window; feedback that recomputes the reward over every action so far, concurrent posts
 * included (on PostgreSQL they queue on the reward's row lock, in whichever order they arrive).
 */

const MINUTE = 60_000;
const T = Date.parse('2026-01-06T10:00:00.000Z');

function efficiencyOf(workflowId: string, at: number, taskType = 'review', complexity: Complexity = 'simple') {
  const base = summarizeRun(new RunBuilder(p('a'), { task: { type: taskType, complexity } }).input());
  const record: EfficiencyRecord = { ...base, task_id: workflowId, completed_at: new Date(at).toISOString() };
  return record;
}

describe.each(ADAPTERS)('MetricsStore contract: $name', (adapter) => {
  let fx: OpenedMetrics;
  let metrics: MetricsStore;
  beforeEach(async () => {
    fx = await adapter.open();
    metrics = fx.metrics;
  });
  afterEach(async () => {
    await fx.close();
  });

  /** A finished workflow of `tenant`, committed with its record and reward like the engine's final commit. */
  async function finished(tenant: string, at: number, taskType = 'review', complexity: Complexity = 'simple') {
    const created = newWorkflow({ tenantId: tenant });
    await fx.store.create(created);
    const record = efficiencyOf(created.workflow.id, at, taskType, complexity);
    const reward = rewardFor(record) as RewardRecord;
    await fx.store.commit({
      workflows: [{ id: created.workflow.id, status: 'completed', endedAt: at }],
      efficiency: [{ ...record, tenant_id: tenant }],
      rewards: [{ ...reward, tenant_id: tenant }],
    });
    return { id: created.workflow.id, record, reward };
  }

  describe('metrics repo', () => {
    it('commits the record and reward with the final state and reads them back, tenant-scoped', async () => {
      const { id, record, reward } = await finished('acme', T);
      expect(await metrics.efficiency('acme', id)).toEqual(record);
      expect(await metrics.reward('acme', id)).toEqual(reward);
      expect(await metrics.efficiency('other', id)).toBeUndefined();
      expect(await metrics.reward('other', id)).toBeUndefined();
      expect((await fx.store.get('acme', id))?.status).toBe('completed');
    });

    it('writes nothing when the change set fails (one transaction)', async () => {
      const created = newWorkflow({ tenantId: 'acme' });
      await fx.store.create(created);
      const record = efficiencyOf(created.workflow.id, T);
      await expect(
        fx.store.commit({
          workflows: [{ id: created.workflow.id, status: 'completed' }],
          nodes: [{ id: 'nd_missing', status: 'completed' }],
          efficiency: [{ ...record, tenant_id: 'acme' }],
          rewards: [{ ...(rewardFor(record) as RewardRecord), tenant_id: 'acme' }],
        }),
      ).rejects.toThrow(/not found/);
      expect(await metrics.efficiency('acme', created.workflow.id)).toBeUndefined();
      expect(await metrics.reward('acme', created.workflow.id)).toBeUndefined();
    });

    it('lists efficiency newest first, filtered by time range, task type and complexity', async () => {
      const a = await finished('acme', T, 'review', 'simple');
      const b = await finished('acme', T + MINUTE, 'fix', 'complex');
      const c = await finished('acme', T + 2 * MINUTE, 'review', 'complex');
      await finished('other', T + MINUTE, 'review', 'simple');
      const ids = async (filter: Parameters<MetricsStore['listEfficiency']>[1], limit = 10) =>
        (await metrics.listEfficiency('acme', filter, null, limit)).items.map((r) => r.task_id);

      expect(await ids({})).toEqual([c.id, b.id, a.id]);
      expect(await ids({}, 2)).toEqual([c.id, b.id]);
      expect(await ids({ from: T + MINUTE })).toEqual([c.id, b.id]);
      expect(await ids({ to: T + MINUTE })).toEqual([b.id, a.id]);
      expect(await ids({ from: T + MINUTE, to: T + MINUTE })).toEqual([b.id]);
      expect(await ids({ taskType: 'review' })).toEqual([c.id, a.id]);
      expect(await ids({ complexity: 'complex' })).toEqual([c.id, b.id]);
      expect(await ids({ taskType: 'review', complexity: 'complex', from: T })).toEqual([c.id]);
      await expect(metrics.listEfficiency('acme', {}, null, 0)).rejects.toThrow(/limit/);
    });

    it('pages efficiency records with a cursor and sums the whole window, not the page', async () => {
      const made = [];
      for (let i = 0; i < 5; i++) made.push(await finished('acme', T + i * MINUTE, i < 3 ? 'review' : 'fix'));
      await finished('other', T, 'review');
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Awaited<ReturnType<MetricsStore['listEfficiency']>> = await metrics.listEfficiency(
          'acme',
          {},
          cursor,
          2,
        );
        seen.push(...page.items.map((r) => r.task_id));
        cursor = page.nextCursor;
      } while (cursor !== null);
      expect(seen).toEqual(made.map((m) => m.id).reverse());
      const sums = await metrics.efficiencySums('acme', {});
      expect(Object.keys(sums)).toEqual(['fix', 'review']);
      expect(sums.review?.count).toBe(3);
      expect(sums.fix?.count).toBe(2);
      expect((await metrics.efficiencySums('acme', { taskType: 'fix' })).review).toBeUndefined();
      await expect(metrics.listEfficiency('acme', {}, 'bm90LWEtY3Vyc29y', 2)).rejects.toThrow(/cursor/i);
    });

    it('lists rewards newest first in a time range', async () => {
      const a = await finished('acme', T);
      const b = await finished('acme', T + MINUTE);
      const ids = async (filter: { to?: number }, cursor: string | null = null, limit = 10) =>
        (await metrics.listRewards('acme', filter, cursor, limit)).items.map((r) => r.workflow_id);
      expect(await ids({})).toEqual([b.id, a.id]);
      expect(await ids({ to: T })).toEqual([a.id]);
      const first = await metrics.listRewards('acme', {}, null, 1);
      expect(await ids({}, first.nextCursor, 1)).toEqual([a.id]);
      expect(await metrics.listRewards('nobody', {}, null, 10)).toEqual({ items: [], nextCursor: null });
      expect((await metrics.rewardSums('acme', {})).count).toBe(2);
      expect(await metrics.rewardSums('nobody', {})).toMatchObject({ count: 0, with_preference: 0 });
    });

    it('adds feedback and recomputes the reward in one transaction, over every action so far', async () => {
      const { id, reward } = await finished('acme', T);
      const seen: FeedbackAction[][] = [];
      const recompute = (at: number) => (actions: FeedbackAction[], current: RewardRecord) => {
        seen.push([...actions]);
        return withFeedback(current, actions, new Date(at).toISOString());
      };
      // Two concurrent posts: neither loses the other's action, whichever goes first.
      const results = await Promise.all([
        metrics.addFeedback('acme', id, { actions: ['commit'] }, T + 1, recompute(T + 1)),
        metrics.addFeedback('acme', id, { actions: ['deploy'], note: 'shipped' }, T + 2, recompute(T + 2)),
      ]);
      expect(seen.map((a) => a.length)).toEqual([1, 2]);
      expect([...(seen[1] ?? [])].sort()).toEqual(['commit', 'deploy']);
      const last = results.find((r) => r?.preference_reward === 0.9);
      expect(last).toBeDefined();
      const stored = await metrics.reward('acme', id);
      expect(stored).toEqual({
        ...reward,
        preference_reward: 0.9,
        aggregate_reward: last?.aggregate_reward,
        updated_at: last?.updated_at,
      });
      expect(stored?.created_at).toBe(reward.created_at);
      const rows = await fx.feedbackRows();
      expect(rows.map((r) => r.actions).sort()).toEqual(['["commit"]', '["deploy"]']);
      expect(rows.every((r) => r.workflow_id === id && r.tenant_id === 'acme')).toBe(true);
    });

    it('loses no action under many concurrent posts: the last recomputation sees them all', async () => {
      const { id } = await finished('acme', T);
      const actions: FeedbackAction[] = ['commit', 'deploy', 'no_edits', 'revert', 'manual_fix', 'retry_different'];
      const posts = Array.from({ length: 12 }, (_, i) => actions[i % actions.length] as FeedbackAction);
      const counts: number[] = [];
      await Promise.all(
        posts.map((action, i) =>
          metrics.addFeedback('acme', id, { actions: [action] }, T + i, (all, current) => {
            counts.push(all.length);
            return withFeedback(current, all, new Date(T + 100).toISOString());
          }),
        ),
      );
      // Each recomputation ran after the one before had committed: 1, 2, … 12 actions.
      expect(counts).toEqual(posts.map((_, i) => i + 1));
      expect((await fx.feedbackRows()).map((r) => r.actions).sort()).toEqual(posts.map((a) => `["${a}"]`).sort());
      const expected = withFeedback(
        (await metrics.reward('acme', id)) as RewardRecord,
        posts,
        new Date(T + 100).toISOString(),
      );
      expect((await metrics.reward('acme', id))?.preference_reward).toBeCloseTo(
        expected.preference_reward as number,
        12,
      );
    });

    it('rolls feedback back when the recomputation throws', async () => {
      const { id, reward } = await finished('acme', T);
      await expect(
        metrics.addFeedback('acme', id, { actions: ['revert'] }, T, () => {
          throw new Error('recompute failed');
        }),
      ).rejects.toThrow('recompute failed');
      expect(await fx.feedbackRows()).toEqual([]);
      expect(await metrics.reward('acme', id)).toEqual(reward);
    });

    it('answers huge, fractional and hostile filter values as empty or bounded windows, never an error', async () => {
      const a = await finished('acme', T);
      const ids = async (filter: Parameters<MetricsStore['listEfficiency']>[1]) =>
        (await metrics.listEfficiency('acme', filter, null, 10)).items.map((r) => r.task_id);
      expect(await ids({ from: -1e300, to: 1e300 })).toEqual([a.id]);
      expect(await ids({ from: T - 0.5, to: T + 0.5 })).toEqual([a.id]);
      expect(await ids({ from: T + 0.5 })).toEqual([]);
      expect(await ids({ to: T - 0.5 })).toEqual([]);
      expect(await ids({ from: Number.MAX_VALUE })).toEqual([]);
      expect(await ids({ taskType: "x'; DROP TABLE efficiency; --".repeat(2_000) })).toEqual([]);
      expect(await metrics.efficiencySums('acme', { to: -Number.MAX_VALUE })).toEqual({});
      expect((await metrics.rewardSums('acme', { from: -1e300, to: 1e300 })).count).toBe(1);
      expect((await metrics.listRewards('acme', { to: Number.POSITIVE_INFINITY }, null, 10)).items).toHaveLength(1);
      expect(await metrics.efficiency('acme', 'wf_'.repeat(50_000))).toBeUndefined();
    });

    it('adds no feedback where there is no reward (cancelled, or another tenant)', async () => {
      const created = newWorkflow({ tenantId: 'acme' });
      await fx.store.create(created);
      const never = () => {
        throw new Error('must not recompute');
      };
      expect(await metrics.addFeedback('acme', created.workflow.id, { actions: ['revert'] }, T, never)).toBeUndefined();
      const { id } = await finished('acme', T);
      expect(await metrics.addFeedback('other', id, { actions: ['revert'] }, T, never)).toBeUndefined();
      expect(await fx.feedbackRows()).toEqual([]);
    });

    it('upserts: committing a record or reward again replaces it, keeping the reward created_at', async () => {
      const { id, record, reward } = await finished('acme', T);
      const later = { ...reward, aggregate_reward: 0.1, created_at: new Date(T + MINUTE).toISOString() };
      const changed = { ...record, efficiency_score: 0.25 };
      await fx.store.commit({
        efficiency: [{ ...changed, tenant_id: 'acme' }],
        rewards: [{ ...later, tenant_id: 'acme' }],
      });
      expect((await metrics.efficiency('acme', id))?.efficiency_score).toBe(0.25);
      expect(await metrics.reward('acme', id)).toEqual({ ...later, created_at: reward.created_at });
    });
  });
});
