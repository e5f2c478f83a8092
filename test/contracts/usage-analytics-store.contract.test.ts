import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSpanId } from '../../src/domain/ids.js';
import type { EfficiencyRecord, FeedbackAction, RewardRecord } from '../../src/domain/metrics.js';
import type { ChangeSet, NewWorkflow } from '../../src/domain/ports.js';
import type { SpanRecord } from '../../src/domain/spans.js';
import type { RetrievalRunRecord, ToolCallRecord } from '../../src/domain/tool-analytics.js';
import type { ModelSums, UsageWindow } from '../../src/domain/usage-analytics.js';
import { summarizeRun } from '../../src/metrics/efficiency.js';
import { rewardFor, withFeedback } from '../../src/metrics/rewards.js';
import { fixtureEvent } from '../support/events.js';
import { newWorkflow } from '../support/store-fixtures.js';
import { p, RunBuilder } from '../unit/metrics/fixtures.js';
import { USAGE_ANALYTICS_ADAPTERS as ADAPTERS, type OpenedAnalytics } from './usage-analytics-store-adapters.js';

/**
 * What every UsageAnalyticsStore and EngagementStore adapter answers for one history, written
 * through the ports as the engine writes it (records and rewards with the final state, events and
 * spans in the journal, tool calls and retrieval runs with their nodes), then changed the ways it
 * changes after a workflow ended: feedback replacing rewards, a record written again with another
 * outcome and day, an event appended after the record. Each adapter gets the same figures that
 * follow from the history (tenant isolation, counts, bytewise order), and over many windows —
 * whole days, whole hours, partial hours, empty, huge, fractional, seeded random — PostgreSQL
 * (direct aggregates) answers exactly what SQLite (roll-ups and raw edges) answers: the same
 * groups in the same order and the same latency lists, floating sums within 1e-9 relative (the
 * order of summation differs between a roll-up's running sums and one aggregate).
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NOW = Date.UTC(2026, 5, 15, 13, 37, 12, 345);
const MODELS = ['sim/haiku', 'anthropic/claude-sonnet-4', 'openai/gpt-4o'] as const;
const TASK_TYPES = ['explore', 'refactor', 'review'] as const;
const COMPLEXITIES = ['trivial', 'simple', 'moderate', 'complex', 'critical'] as const;
const REASONS = ['tests_passed_first_try', 'review_approved', 'tests_failed', 'spec_validated'] as const;
/** Mixed case on purpose: bytewise order puts 'Grep' before 'grep'. */
const TOOLS = ['grep', 'read', 'Grep'] as const;
const pick = <T>(list: readonly T[], i: number): T => list[i % list.length] as T;

type Op =
  | { kind: 'create'; workflow: NewWorkflow }
  | { kind: 'commit'; changes: ChangeSet }
  | { kind: 'feedback'; tenantId: string; workflowId: string; action: FeedbackAction; at: number };

interface Written {
  tenantId: string;
  id: string;
  endedAt: number;
  models: string[];
  prompts: number;
}

function recordOf(id: string, i: number, endedAt: number, models: string[]): EfficiencyRecord {
  const taskType = pick(TASK_TYPES, i);
  const complexity = pick(COMPLEXITIES, i >> 1);
  const base = summarizeRun(new RunBuilder(p('a'), { task: { type: taskType, complexity } }).input());
  const byModel: EfficiencyRecord['metrics']['by_model'] = {};
  for (const [k, model] of models.entries()) {
    byModel[model] = {
      calls: 1,
      requests: 1,
      tokens_in: 100 + (i % 50) + k,
      tokens_out: 20 + (i % 30),
      cost_usd: 0.001 * ((i % 7) + 1) + k / 3_000,
      ...(model.startsWith('sim/') ? { simulated: true } : {}),
    };
  }
  return {
    ...base,
    task_id: id,
    task_type: taskType,
    complexity,
    started_at: new Date(endedAt - 5_000).toISOString(),
    completed_at: new Date(endedAt).toISOString(),
    metrics: {
      ...base.metrics,
      wall_time_seconds: 5 + (i % 3) / 7,
      agents_spawned: 1 + (i % 2),
      total_agent_calls: models.length,
      recovery_rate: i % 5 === 0 ? 1 / 3 : null,
      by_model: byModel,
    },
    outcome: i % 9 === 0 ? 'failure' : 'success',
    outcome_reason: pick(REASONS, i),
    efficiency_score: ((i * 37) % 100) / 101,
    quality_pillars: {
      ...base.quality_pillars,
      tool_selection_correct: i % 3 === 0 ? null : i % 11 !== 0,
      goal_adherence: i % 2 === 0 ? 0.5 + (i % 5) / 10 : null,
    },
  };
}

/** A tenant's finished workflows over `days` days before NOW, as the engine's commits write them. */
function history(tenantId: string, count: number, days: number, ops: Op[], written: Written[]): void {
  for (let i = 0; i < count; i++) {
    const created = newWorkflow({ tenantId });
    const id = created.workflow.id;
    const step = created.nodes[1]?.id as string;
    const endedAt = NOW - days * DAY + Math.floor(((i + 0.5) * days * DAY) / count) + (i % 4) * 997;
    const startedAt = endedAt - 5_000;
    const models = i % 3 === 0 ? [pick(MODELS, i), pick(MODELS, i + 1)] : [pick(MODELS, i)];
    ops.push({ kind: 'create', workflow: created });
    const base = { workflowId: id, tenantId, nodeId: step };
    let seq = 0;
    const events = [fixtureEvent({ ...base, seq: ++seq, at: startedAt }, 'workflowStart', {})];
    for (const [c, model] of models.entries()) {
      events.push(
        fixtureEvent({ ...base, seq: ++seq, at: startedAt + 900 + c }, 'agentPromptEnd', {
          node: 'draft',
          agent: 'writer',
          model,
          simulated: model.startsWith('sim/'),
          attempt: 1,
          turn: 1,
          // Repeats, fractions and a zero: exact lists on raw edges, buckets in roll-up periods.
          duration: i % 10 === 9 ? 0 : i % 6 === 1 ? 250.5 : 200 + ((i * 131 + c * 977) % 4800),
          requests: 1,
          tokenUsage: { inputTokens: 100, outputTokens: 20 },
          ...(i % 7 === c ? { error: { code: 'PROVIDER_ERROR', message: 'boom' } } : {}),
        }),
      );
    }
    if (i % 4 === 0) {
      events.push(
        fixtureEvent({ ...base, seq: ++seq, at: endedAt - 10 }, 'cacheHit', {
          key: `k${i}`,
          node: 'draft',
          model: models[0],
          tokenUsage: { inputTokens: 50 + i, outputTokens: 10 },
          costSavedUsd: 0.002 + i / 10_000,
          ...(models[0]?.startsWith('sim/') ? { simulated: true } : {}),
        }),
      );
    }
    const guardrail: SpanRecord<'guardrail_span'> = {
      spanId: newSpanId(),
      traceId: created.workflow.traceId,
      workflowId: id,
      tenantId,
      nodeId: step,
      parentId: null,
      type: 'guardrail_span',
      startedAt,
      endedAt: startedAt + 1,
      status: 'ok',
      error: null,
      fields: { guardrail_name: 'input_validation', triggered: i % 5 === 0, blocking: false },
    };
    const toolCalls: ToolCallRecord[] = Array.from({ length: 1 + (i % 3) }, (_, k) => ({
      tenantId,
      workflowId: id,
      nodeId: step,
      tool: pick(TOOLS, i + k),
      agent: pick(['writer', 'Reader'], i),
      model: models[0] as string,
      success: (i + k) % 6 !== 0,
      latencyMs: 10 + ((i * 7 + k) % 40) + (k === 1 ? 0.5 : 0),
      resultBytes: 100,
      at: startedAt + 100 * (k + 1),
    }));
    const retrievalRuns: RetrievalRunRecord[] =
      i % 3 === 0
        ? [
            {
              tenantId,
              workflowId: id,
              nodeId: step,
              nodeName: 'draft',
              taskType: pick(TASK_TYPES, i),
              agent: 'writer',
              model: models[0] as string,
              corpusId: 'cp_1',
              mode: 'tools',
              retrievalCalls: 1 + (i % 4),
              steps: 2 + (i % 3),
              loopExhausted: i % 9 === 0,
              haltReason: 'finalized',
              guard: i % 2 ? 'min_calls' : 'none',
              guardMinCalls: i % 2 ? 2 : null,
              guardInterventions: i % 2 ? i % 3 : 0,
              relevant: i % 6 === 0 ? true : i % 6 === 3 ? false : null,
              at: startedAt + 300,
            },
          ]
        : [];
    ops.push({
      kind: 'commit',
      changes: {
        nodes: [{ id: step, status: i % 5 === 4 ? 'failed' : 'completed', endedAt: endedAt - 1 }],
        events,
        spans: [{ op: 'insert', span: guardrail }],
        toolCalls,
        retrievalRuns,
      },
    });
    const record = recordOf(id, i, endedAt, models);
    const reward = rewardFor(record) as RewardRecord;
    ops.push({
      kind: 'commit',
      changes: {
        workflows: [{ id, status: 'completed', endedAt }],
        events: [fixtureEvent({ ...base, seq: ++seq, at: endedAt }, 'workflowEnd', { status: 'completed' })],
        efficiency: [{ ...record, tenant_id: tenantId }],
        ...(i % 8 === 7 ? {} : { rewards: [{ ...reward, tenant_id: tenantId }] }),
      },
    });
    written.push({ tenantId, id, endedAt, models, prompts: models.length });
    if (i % 10 === 3 && i % 8 !== 7)
      ops.push({ kind: 'feedback', tenantId, workflowId: id, action: 'commit', at: endedAt + 1 });
    if (i === 20) {
      // Written again, a day later and failed: leaves its old day, counts on its new one.
      const moved = { ...record, completed_at: new Date(endedAt + DAY + 17 * 60_000).toISOString() };
      ops.push({
        kind: 'commit',
        changes: { efficiency: [{ ...moved, outcome: 'failure', efficiency_score: 0.1, tenant_id: tenantId }] },
      });
    }
    if (i === 9) {
      // An event after the record: its prompt end counts with the record.
      ops.push({
        kind: 'commit',
        changes: {
          events: [
            fixtureEvent({ ...base, seq: ++seq, at: endedAt + 5 }, 'agentPromptEnd', {
              node: 'draft',
              agent: 'writer',
              model: 'sim/haiku',
              simulated: true,
              attempt: 2,
              turn: 1,
              duration: 123_456,
              requests: 1,
            }),
          ],
        },
      });
      written[written.length - 1] = { tenantId, id, endedAt, models, prompts: models.length + 1 };
    }
  }
}

const OPS: Op[] = [];
const WRITTEN: Written[] = [];
history('acme', 60, 3, OPS, WRITTEN);
history('globex', 12, 1, OPS, WRITTEN);

async function apply(fx: OpenedAnalytics): Promise<void> {
  for (const op of OPS) {
    if (op.kind === 'create') await fx.store.create(op.workflow);
    else if (op.kind === 'commit') await fx.store.commit(op.changes);
    else {
      const done = await fx.metrics.addFeedback(op.tenantId, op.workflowId, { actions: [op.action] }, op.at, (all, r) =>
        withFeedback(r, all, new Date(op.at).toISOString()),
      );
      expect(done?.preference_reward).toBe(0.8);
    }
  }
}

function windows(): UsageWindow[] {
  const list: UsageWindow[] = [
    { from: 0, to: NOW + 1 },
    { from: NOW + 1 - DAY, to: NOW + 1 },
    { from: NOW - 2 * DAY, to: NOW + 1 - DAY },
    { from: Date.UTC(2026, 5, 13), to: Date.UTC(2026, 5, 15) },
    { from: Date.UTC(2026, 5, 13, 5), to: Date.UTC(2026, 5, 13, 9) },
    { from: Date.UTC(2026, 5, 13, 5, 10), to: Date.UTC(2026, 5, 13, 5, 50) },
    { from: Date.UTC(2026, 5, 13, 5, 10), to: Date.UTC(2026, 5, 14, 0, 0, 0, 1) },
    { from: NOW - 3 * DAY + 0.5, to: NOW - DAY - 0.5 },
    { from: NOW, to: NOW },
    { from: NOW, to: NOW - DAY },
    { from: -1e300, to: 1e300 },
    { from: Number.MIN_SAFE_INTEGER, to: Number.MAX_SAFE_INTEGER },
  ];
  let seed = 29;
  const next = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  for (let i = 0; i < 25; i++) {
    const from = NOW - Math.floor(next() * 4 * DAY);
    list.push({ from, to: from + Math.floor(next() * 2 * DAY) });
  }
  return list;
}

/** Numbers within 1e-9 (relative); everything else, order included, equal. */
function expectClose(actual: unknown, expected: unknown, path = '$'): void {
  if (typeof expected === 'number') {
    expect(typeof actual, path).toBe('number');
    expect(Math.abs((actual as number) - expected), path).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(expected)));
  } else if (Array.isArray(expected)) {
    expect(Array.isArray(actual) && actual.length, path).toBe(expected.length);
    for (const [i, e] of expected.entries()) expectClose((actual as unknown[])[i], e, `${path}[${i}]`);
  } else if (expected !== null && typeof expected === 'object') {
    expect(Object.keys(actual as object).sort(), path).toEqual(Object.keys(expected).sort());
    for (const [k, e] of Object.entries(expected))
      expectClose((actual as Record<string, unknown>)[k], e, `${path}.${k}`);
  } else {
    expect(actual, path).toEqual(expected);
  }
}

const opened = new Map<string, OpenedAnalytics>();
beforeAll(async () => {
  for (const adapter of ADAPTERS) {
    const fx = await adapter.open();
    await apply(fx);
    opened.set(adapter.name, fx);
  }
}, 120_000);
afterAll(async () => {
  for (const fx of opened.values()) await fx.close();
});
const fxOf = (name: string) => opened.get(name) as OpenedAnalytics;
const WHOLE = { from: 0, to: NOW + DAY * 2 };

describe.each(ADAPTERS)('UsageAnalyticsStore and EngagementStore contract: $name', ({ name }) => {
  it('counts each tenant’s own records, rewards, calls and runs, and nobody’s for a stranger', async () => {
    const { usage } = fxOf(name);
    const acme = WRITTEN.filter((w) => w.tenantId === 'acme');
    const dashboard = await usage.dashboard('acme', WHOLE);
    expect(dashboard.tasks).toBe(acme.length);
    expect(dashboard.rewards.count).toBe(acme.length - Math.floor((acme.length + 1) / 8));
    expect(dashboard.rewards.preference.count).toBe(acme.filter((_, i) => i % 10 === 3 && i % 8 !== 7).length);
    expect(dashboard.guardrails.count).toBe(acme.length);
    expect(dashboard.cache.hits).toBe(acme.filter((_, i) => i % 4 === 0).length);
    expect((await usage.dashboard('globex', WHOLE)).tasks).toBe(12);
    const none = await usage.dashboard('nobody', WHOLE);
    expect(none).toMatchObject({ tasks: 0, costUsd: 0, byTaskModel: [], byTaskComplexity: [] });
    expect(none.rewards.count + none.toolCalls.count + none.guardrails.count + none.cache.hits).toBe(0);
    expect(await usage.models('nobody', WHOLE)).toEqual([]);
    expect(await usage.taskModels('nobody', WHOLE)).toEqual([]);
    expect(await usage.toolCalls('nobody', WHOLE)).toEqual({ byToolAgent: [], pairs: [], efficiency: [] });
    expect(await fxOf(name).engagement.sums('nobody', {})).toEqual([]);
  });

  it('lists models, tools and pairs in bytewise order with every ended call', async () => {
    const { usage } = fxOf(name);
    const models: ModelSums[] = await usage.models('acme', WHOLE);
    expect(models.map((m) => m.model)).toEqual([...MODELS].sort());
    const prompts = WRITTEN.filter((w) => w.tenantId === 'acme').reduce((s, w) => s + w.prompts, 0);
    expect(models.reduce((s, m) => s + m.endedCalls, 0)).toBe(prompts);
    expect(models.find((m) => m.model === 'sim/haiku')?.simulated).toBe(true);
    const tools = await usage.toolCalls('acme', WHOLE);
    expect([...new Set(tools.byToolAgent.map((t) => t.tool))]).toEqual(['Grep', 'grep', 'read']);
    expect(tools.byToolAgent.map((t) => t.agent).slice(0, 2)).toEqual(['Reader', 'writer']);
    expect(tools.pairs.map((t) => t.tool)).toEqual([...tools.pairs.map((t) => t.tool)].sort());
    expect(tools.efficiency.map((t) => t.tool)).toEqual(['Grep', 'grep', 'read']);
    const engagement = await fxOf(name).engagement.sums('acme', {});
    expect(engagement.map((e) => [e.model, e.guarded])).toEqual(
      [...engagement.map((e) => [e.model, e.guarded] as const)].sort(([a, x], [b, y]) =>
        a < b ? -1 : a > b ? 1 : Number(x) - Number(y),
      ),
    );
    expect(engagement.reduce((s, e) => s + e.runs, 0)).toBe(20);
    expect(await fxOf(name).engagement.sums('acme', { taskType: 'nope'.repeat(10_000) })).toEqual([]);
  });
});

/** Every report of both adapters in every window, for every tenant: PostgreSQL's equal to SQLite's. */
async function compareAll(): Promise<number> {
  const sqlite = fxOf('sqlite');
  const postgres = fxOf('postgres');
  let tasks = 0;
  for (const tenant of ['acme', 'globex', 'nobody']) {
    for (const w of windows()) {
      const at = `${tenant} [${w.from}, ${w.to})`;
      const dashboard = await sqlite.usage.dashboard(tenant, w);
      expectClose(await postgres.usage.dashboard(tenant, w), dashboard, `${at} dashboard`);
      expectClose(await postgres.usage.taskModels(tenant, w), await sqlite.usage.taskModels(tenant, w), at);
      expectClose(await postgres.usage.toolCalls(tenant, w), await sqlite.usage.toolCalls(tenant, w), at);
      const models = await sqlite.usage.models(tenant, w);
      const pgModels = await postgres.usage.models(tenant, w);
      expectClose(pgModels, models, `${at} models`);
      // Latency lists exactly: the same values (bucket floors computed by libm on both), the same order.
      expect(pgModels.map((m) => m.durations)).toEqual(models.map((m) => m.durations));
      const filter = { from: w.from, to: w.to };
      expectClose(await postgres.engagement.sums(tenant, filter), await sqlite.engagement.sums(tenant, filter), at);
      const typed = { ...filter, taskType: 'review' };
      expectClose(await postgres.engagement.sums(tenant, typed), await sqlite.engagement.sums(tenant, typed), at);
      tasks += dashboard.tasks;
    }
  }
  return tasks;
}

describe('UsageAnalyticsStore and EngagementStore: PostgreSQL answers what SQLite answers', () => {
  it('in every window, for every tenant', async () => {
    expect(await compareAll()).toBeGreaterThan(500);
  }, 120_000);

  it('after retention swept the older trees: whole hours and days still count them, raw edges do not', async () => {
    const cutoff = NOW - 1.5 * DAY;
    const swept = await Promise.all(ADAPTERS.map(({ name }) => fxOf(name).sweep(cutoff)));
    expect(swept[0]).toBeGreaterThan(20);
    expect(swept[1]).toBe(swept[0]);
    for (const { name } of ADAPTERS) {
      const { usage, engagement } = fxOf(name);
      expect((await usage.dashboard('acme', WHOLE)).tasks, name).toBe(60);
      // Tool calls and engagement read raw rows on both: the swept ones are gone.
      expect(
        (await engagement.sums('acme', {})).reduce((n, e) => n + e.runs, 0),
        name,
      ).toBeLessThan(20);
    }
    expect(await compareAll()).toBeGreaterThan(300);
  }, 120_000);
});
