import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SelectionStrategy } from '../../src/domain/agent-selection.js';
import { type AgentUse, MAX_AGENTS_PER_TENANT, MAX_VERSIONS_PER_AGENT } from '../../src/domain/agents.js';
import { AppError } from '../../src/domain/errors.js';
import { type EfficiencyRecord, type RewardRecord, recordCostUsd } from '../../src/domain/metrics.js';
import type { AgentRegistry } from '../../src/domain/ports.js';
import { summarizeRun } from '../../src/metrics/efficiency.js';
import { rewardFor } from '../../src/metrics/rewards.js';
import { newWorkflow } from '../support/store-fixtures.js';
import { p, RunBuilder } from '../unit/metrics/fixtures.js';
import { AGENT_REGISTRY_ADAPTERS as ADAPTERS, type OpenedRegistry } from './agent-registry-adapters.js';

/**
 * What every AgentRegistry adapter promises, through the ports alone: versions (create is 1, each
 * update n + 1, a retired name's next create continues the numbering), retiring hides every version,
 * tenant scoping, keyset paging by name with the same cursors, the per-tenant and per-name limits,
 * and races — registries of two instances creating one name get one agent and CONFLICTs, concurrent
 * updates get distinct consecutive versions, concurrent creates at the cap never pass it. Then the
 * selection sums over agent uses, records and rewards, each workflow once, another tenant's never.
 */

const T = Date.parse('2026-02-02T09:00:00.000Z');
const MINUTE = 60_000;

const code = async (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    () => 'ok',
    (err: unknown) => (err instanceof AppError ? err.code : String(err)),
  );

describe.each(ADAPTERS)('AgentRegistry contract: $name', (adapter) => {
  let fx: OpenedRegistry;
  let registry: AgentRegistry;
  beforeEach(async () => {
    fx = await adapter.open();
    registry = fx.registry;
  });
  afterEach(async () => {
    await fx.close();
  });

  describe('versions and retiring', () => {
    it('creates version 1, adds versions on update, and reads current, given and all versions', async () => {
      const v1 = await registry.create('acme', 'writer', { model: 'sim/sonnet', role: 'development' });
      expect(v1).toMatchObject({ name: 'writer', version: 1, role: 'development', config: { model: 'sim/sonnet' } });
      const v2 = await registry.update('acme', 'writer', { model: 'sim/opus', role: 'review' });
      expect(v2).toMatchObject({ version: 2, role: 'review' });
      expect(await registry.get('acme', 'writer')).toEqual(v2);
      expect(await registry.get('acme', 'writer', 1)).toEqual(v1);
      expect(await registry.get('acme', 'writer', 3)).toBeUndefined();
      expect(await registry.versions('acme', 'writer')).toEqual([v1, v2]);
      expect(await registry.update('acme', 'ghost', { model: 'sim/opus' })).toBeUndefined();
      expect(await code(registry.create('acme', 'writer', { model: 'sim/haiku' }))).toBe('CONFLICT');
    });

    it('retires a name: gone everywhere, and a new create continues the numbering', async () => {
      await registry.create('acme', 'writer', { model: 'sim/sonnet' });
      await registry.update('acme', 'writer', { model: 'sim/opus' });
      expect(await registry.retire('acme', 'writer')).toBe(true);
      expect(await registry.retire('acme', 'writer')).toBe(false);
      expect(await registry.get('acme', 'writer')).toBeUndefined();
      expect(await registry.get('acme', 'writer', 1)).toBeUndefined();
      expect(await registry.versions('acme', 'writer')).toEqual([]);
      expect(await registry.update('acme', 'writer', { model: 'sim/haiku' })).toBeUndefined();
      expect((await registry.list('acme', { cursor: null, limit: 10 })).items).toEqual([]);
      const again = await registry.create('acme', 'writer', { model: 'sim/haiku' });
      expect(again.version).toBe(3);
      expect(await registry.versions('acme', 'writer')).toEqual([again]);
    });

    it('hides every agent from other tenants, who may use the same names', async () => {
      await registry.create('acme', 'writer', { model: 'sim/sonnet', role: 'review' });
      expect(await registry.get('globex', 'writer')).toBeUndefined();
      expect(await registry.versions('globex', 'writer')).toEqual([]);
      expect(await registry.ofRole('globex', 'review')).toEqual([]);
      expect(await registry.update('globex', 'writer', { model: 'sim/opus' })).toBeUndefined();
      expect(await registry.retire('globex', 'writer')).toBe(false);
      expect((await registry.create('globex', 'writer', { model: 'sim/opus' })).version).toBe(1);
      expect((await registry.get('acme', 'writer'))?.config.model).toBe('sim/sonnet');
    });

    it('answers odd versions and names as absent, never an error', async () => {
      await registry.create('acme', 'writer', { model: 'sim/sonnet' });
      for (const version of [0, -1, 1.5, 2 ** 31, 1e300, Number.MAX_SAFE_INTEGER]) {
        expect(await registry.get('acme', 'writer', version)).toBeUndefined();
      }
      expect(await registry.get('acme', "writer' OR '1'='1")).toBeUndefined();
      expect(await registry.versions('acme', '%')).toEqual([]);
    });
  });

  describe('lists', () => {
    it('lists current versions of live names by name, in keyset pages, and by role', async () => {
      // Bytewise order: upper case before lower, '_' between them.
      const names = ['b-agent', 'A-agent', 'a_agent', 'a-agent', 'z', 'Zed'];
      for (const [i, name] of names.entries()) {
        await registry.create('acme', name, { model: 'sim/sonnet', role: i % 2 === 0 ? 'review' : 'testing' });
      }
      await registry.update('acme', 'z', { model: 'sim/opus', role: 'review' });
      await registry.create('globex', 'aaa', { model: 'sim/sonnet', role: 'review' });
      const sorted = [...names].sort();
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Awaited<ReturnType<AgentRegistry['list']>> = await registry.list('acme', { cursor, limit: 4 });
        seen.push(...page.items.map((a) => `${a.name}@${a.version}`));
        cursor = page.nextCursor;
      } while (cursor !== null);
      expect(seen).toEqual(sorted.map((n) => (n === 'z' ? 'z@2' : `${n}@1`)));
      const reviewers = (await registry.ofRole('acme', 'review')).map((a) => a.name);
      expect(reviewers).toEqual(['a_agent', 'b-agent', 'z']);
      const first = await registry.list('acme', { cursor: null, limit: 2, role: 'review' });
      expect(first.items.map((a) => a.name)).toEqual(['a_agent', 'b-agent']);
      const rest = await registry.list('acme', { cursor: first.nextCursor, limit: 2, role: 'review' });
      expect(rest).toEqual({ items: [expect.objectContaining({ name: 'z', version: 2 })], nextCursor: null });
      await expect(registry.list('acme', { cursor: 'not-a-cursor', limit: 2 })).rejects.toThrow(/cursor/i);
    });
  });

  describe('limits and races', () => {
    it('two instances creating one name at once: one agent, every other call CONFLICT', async () => {
      const registries = [registry, fx.second()];
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          code((registries[i % 2] as AgentRegistry).create('acme', 'shared', { model: 'sim/sonnet', system: `#${i}` })),
        ),
      );
      expect(results.filter((r) => r === 'ok')).toHaveLength(1);
      expect(results.filter((r) => r === 'CONFLICT')).toHaveLength(7);
      expect((await registry.versions('acme', 'shared')).map((a) => a.version)).toEqual([1]);
    });

    it('concurrent updates get distinct consecutive versions', async () => {
      await registry.create('acme', 'writer', { model: 'sim/sonnet' });
      const other = fx.second();
      const made = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 ? other : registry).update('acme', 'writer', { model: 'sim/sonnet', system: `v${i}` }),
        ),
      );
      expect(made.map((a) => a?.version).sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(
        Array.from({ length: 10 }, (_, i) => i + 2),
      );
      expect((await registry.versions('acme', 'writer')).map((a) => a.version)).toEqual(
        Array.from({ length: 11 }, (_, i) => i + 1),
      );
    });

    it('caps versions per name and live names per tenant, concurrent creates included', async () => {
      await registry.create('acme', 'writer', { model: 'sim/sonnet' });
      for (let v = 2; v <= MAX_VERSIONS_PER_AGENT; v++)
        await registry.update('acme', 'writer', { model: 'sim/sonnet' });
      expect(await code(registry.update('acme', 'writer', { model: 'sim/sonnet' }))).toBe('LIMIT_EXCEEDED');
      for (let i = 1; i < MAX_AGENTS_PER_TENANT - 2; i++)
        await registry.create('acme', `a${i}`, { model: 'sim/haiku' });
      const other = fx.second();
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => code((i % 2 ? other : registry).create('acme', `late${i}`, {}))),
      );
      expect(results.filter((r) => r === 'ok')).toHaveLength(2);
      expect(results.filter((r) => r === 'LIMIT_EXCEEDED')).toHaveLength(4);
      expect((await registry.create('globex', 'writer', {})).version).toBe(1);
      expect(await registry.retire('acme', 'a1')).toBe(true);
      expect((await registry.create('acme', 'after-retire', {})).version).toBe(1);
    });
  });

  describe('selection sums', () => {
    function recordOf(
      workflowId: string,
      at: number,
      outcome: EfficiencyRecord['outcome'],
      costUsd: number,
      taskType: string,
    ) {
      const base = summarizeRun(new RunBuilder(p('a'), { task: { type: taskType, complexity: 'simple' } }).input());
      const record: EfficiencyRecord = {
        ...base,
        task_id: workflowId,
        completed_at: new Date(at).toISOString(),
        outcome,
        metrics: {
          ...base.metrics,
          by_model: {
            'anthropic/claude-x': { calls: 1, requests: 1, tokens_in: 10, tokens_out: 5, cost_usd: costUsd },
            'sim/haiku': { calls: 1, requests: 1, tokens_in: 10, tokens_out: 5, cost_usd: costUsd / 2 },
          },
        },
      };
      return record;
    }

    interface Run {
      tenant?: string;
      uses: Array<{ agent: string; strategy: SelectionStrategy | null; saved?: number | null; taskType?: string }>;
      ended?: { at: number; outcome: EfficiencyRecord['outcome']; cost: number; rewarded: boolean; taskType?: string };
    }

    /** A root workflow with its agent uses, and (when it ended) its record and maybe its reward. */
    async function run({ tenant = 'acme', uses, ended }: Run) {
      const created = newWorkflow({ tenantId: tenant });
      const id = created.workflow.id;
      const agentUses: AgentUse[] = uses.map((u, i) => ({
        workflowId: id,
        tenantId: tenant,
        node: `n${i}`,
        agent: u.agent,
        version: 1,
        strategy: u.strategy,
        role: null,
        taskType: u.taskType ?? 'review',
        complexity: 'simple',
        scores: u.strategy === null ? null : { [u.agent]: 0.5 },
        reference: null,
        savedUsd: u.saved ?? null,
        savedSimulatedUsd: u.saved === undefined || u.saved === null ? null : u.saved / 10,
        createdAt: (ended?.at ?? T) - 1000 + i,
      }));
      await fx.store.create({ ...created, agentUses });
      if (ended === undefined) return { id };
      const record = recordOf(id, ended.at, ended.outcome, ended.cost, ended.taskType ?? 'review');
      const reward = rewardFor(record) as RewardRecord;
      await fx.store.commit({
        workflows: [{ id, status: 'completed', endedAt: ended.at }],
        efficiency: [{ ...record, tenant_id: tenant }],
        ...(ended.rewarded ? { rewards: [{ ...reward, tenant_id: tenant }] } : {}),
      });
      return { id, record, reward };
    }

    it('sums rewarded runs per agent, per strategy and per task type, each workflow once', async () => {
      const w1 = await run({
        uses: [
          { agent: 'alpha', strategy: 'greedy', saved: 0.01 },
          { agent: 'alpha', strategy: 'greedy', saved: 0.02 },
          { agent: 'beta', strategy: null },
        ],
        ended: { at: T, outcome: 'success', cost: 0.004, rewarded: true },
      });
      const w2 = await run({
        uses: [{ agent: 'alpha', strategy: 'thompson', saved: null }],
        ended: { at: T + MINUTE, outcome: 'failure', cost: 0.002, rewarded: true },
      });
      // Running (no record): counts nowhere. Ended without a reward: a run, not a rewarded one.
      await run({ uses: [{ agent: 'alpha', strategy: 'greedy', saved: 5 }] });
      const w4 = await run({
        uses: [{ agent: 'alpha', strategy: 'greedy', saved: 0.5, taskType: 'fix' }],
        ended: { at: T + 2 * MINUTE, outcome: 'success', cost: 0.001, rewarded: false, taskType: 'fix' },
      });
      // Another tenant's runs never count.
      await run({
        tenant: 'globex',
        uses: [{ agent: 'alpha', strategy: 'greedy', saved: 9 }],
        ended: { at: T, outcome: 'success', cost: 9, rewarded: true },
      });

      const r1 = w1.reward?.aggregate_reward as number;
      const r2 = w2.reward?.aggregate_reward as number;
      const c1 = recordCostUsd(w1.record as EfficiencyRecord);
      const c2 = recordCostUsd(w2.record as EfficiencyRecord);
      const c4 = recordCostUsd(w4.record as EfficiencyRecord);

      const history = await registry.rewardHistory('acme', ['alpha', 'beta', 'ghost'], 'review', 'simple');
      expect([...history.keys()].sort()).toEqual(['alpha', 'beta']);
      expect(history.get('alpha')?.runs).toBe(2);
      expect(history.get('alpha')?.successes).toBe(1);
      expect(history.get('alpha')?.rewardSum).toBeCloseTo(r1 + r2, 12);
      expect(history.get('alpha')?.costUsd).toBeCloseTo(c1.real + c2.real, 12);
      expect(history.get('alpha')?.simulatedCostUsd).toBeCloseTo(c1.simulated + c2.simulated, 12);
      expect(history.get('beta')).toMatchObject({ runs: 1, successes: 1 });
      expect(await registry.rewardHistory('acme', ['alpha'], 'review', 'complex')).toEqual(new Map());
      expect(await registry.rewardHistory('globex', ['beta'], 'review', 'simple')).toEqual(new Map());

      const strategies = await registry.strategySums('acme', {});
      expect(strategies.map((s) => s.strategy)).toEqual(['greedy', 'thompson']);
      const greedy = strategies[0];
      expect(greedy).toMatchObject({ runs: 2, rewarded: 1, successes: 2 });
      expect(greedy?.rewardSum).toBeCloseTo(r1, 12);
      expect(greedy?.costUsd).toBeCloseTo(c1.real + c4.real, 12);
      expect(greedy?.savedUsd).toBeCloseTo(0.03 + 0.5, 12);
      expect(greedy?.savedSimulatedUsd).toBeCloseTo(0.053, 12);
      expect(strategies[1]).toMatchObject({ runs: 1, rewarded: 1, successes: 0, savedUsd: 0, savedSimulatedUsd: 0 });
      expect((await registry.strategySums('acme', { taskType: 'fix' })).map((s) => [s.strategy, s.runs])).toEqual([
        ['greedy', 1],
      ]);
      expect(
        (await registry.strategySums('acme', { from: T + MINUTE, to: T + MINUTE })).map((s) => s.strategy),
      ).toEqual(['thompson']);
      expect(await registry.strategySums('acme', { from: 1e300 })).toEqual([]);
      expect((await registry.strategySums('acme', { from: -1e300, to: 1e300 })).length).toBe(2);

      const savings = await registry.savingsSums('acme', {});
      expect(savings.map((s) => [s.taskType, s.strategy, s.runs, s.counted])).toEqual([
        ['fix', 'greedy', 1, 1],
        ['review', 'greedy', 1, 2],
        ['review', 'thompson', 1, 0],
      ]);
      expect(savings[1]?.savedUsd).toBeCloseTo(0.03, 12);
      expect(await registry.savingsSums('acme', { taskType: 'x'.repeat(100_000) })).toEqual([]);
      expect(await registry.savingsSums('nobody', {})).toEqual([]);
    });

    it('sums each strategy over its newest uses only, bounded by perStrategy', async () => {
      const made = [];
      for (let i = 0; i < 5; i++) {
        made.push(
          await run({
            uses: [{ agent: 'alpha', strategy: 'greedy' }],
            ended: { at: T + i * MINUTE, outcome: i < 2 ? 'failure' : 'success', cost: 0.001, rewarded: i !== 4 },
          }),
        );
      }
      await run({
        uses: [{ agent: 'alpha', strategy: 'cost_aware' }],
        ended: { at: T, outcome: 'success', cost: 0.001, rewarded: true },
      });
      await run({
        tenant: 'globex',
        uses: [{ agent: 'alpha', strategy: 'thompson' }],
        ended: { at: T, outcome: 'success', cost: 0.001, rewarded: true },
      });
      const recent = await registry.recentStrategySums('acme', 'review', 3);
      expect(recent.map((s) => [s.strategy, s.runs, s.rewarded, s.successes])).toEqual([
        ['greedy', 3, 2, 3],
        ['cost_aware', 1, 1, 1],
      ]);
      const newest = made.slice(2, 4).map((m) => m.reward?.aggregate_reward as number);
      expect(recent[0]?.rewardSum).toBeCloseTo((newest[0] ?? 0) + (newest[1] ?? 0), 12);
      expect((await registry.recentStrategySums('acme', 'review', 100))[0]?.runs).toBe(5);
      expect(await registry.recentStrategySums('acme', 'fix', 3)).toEqual([]);
      expect(await registry.recentStrategySums('globex', 'review', 3)).toEqual([
        expect.objectContaining({ strategy: 'thompson', runs: 1 }),
      ]);
    });
  });
});
