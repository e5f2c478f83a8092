import { openDatabase } from '../../src/store/sqlite/db.js';

/**
 * A tenant's analytics history written straight into SQLite, fast: finished workflows with their
 * efficiency record, reward, journal row (prompt events, a cache hit, a guardrail span), tool calls
 * and a retrieval run, spread evenly over `days` days before `now`. The rows have the shapes the
 * engine writes (migrations/sqlite/0006, 0008, 0010); workflows rows are left out (foreign keys are off
 * on this connection only), which keeps the fill to what the analytics read.
 */

export interface HistoryOptions {
  dbPath: string;
  tenantId: string;
  /** agentPromptEnd events in all: two per workflow. */
  calls: number;
  days: number;
  now: number;
}

const CALLS_PER_WORKFLOW = 2;
const MODELS = ['sim/haiku', 'anthropic/claude-sonnet-4', 'openai/gpt-4o'] as const;
const TASK_TYPES = ['explore', 'refactor', 'unit-tests', 'review'] as const;
const COMPLEXITIES = ['trivial', 'simple', 'moderate', 'complex', 'critical'] as const;
const REASONS = ['tests_passed_first_try', 'review_approved', 'tests_failed', 'spec_validated'] as const;

const pick = <T>(list: readonly T[], i: number): T => list[i % list.length] as T;

function recordOf(id: string, i: number, startedAt: number, endedAt: number, models: string[]): string {
  const byModel: Record<string, unknown> = {};
  for (const [k, model] of models.entries()) {
    byModel[model] = {
      calls: 1,
      requests: 1,
      tokens_in: 100 + (i % 50) + k,
      tokens_out: 20 + (i % 30),
      cost_usd: 0.001 * ((i % 7) + 1),
      ...(model.startsWith('sim/') ? { simulated: true } : {}),
    };
  }
  const tier = { calls: 0, est_tokens: 0 };
  return JSON.stringify({
    task_id: id,
    correlation_id: null,
    task_type: pick(TASK_TYPES, i),
    complexity: pick(COMPLEXITIES, i >> 2),
    started_at: new Date(startedAt).toISOString(),
    completed_at: new Date(endedAt).toISOString(),
    metrics: {
      wall_time_seconds: (endedAt - startedAt) / 1000,
      agents_spawned: 1 + (i % 2),
      total_agent_calls: CALLS_PER_WORKFLOW,
      provider_requests: CALLS_PER_WORKFLOW,
      retry_count: i % 5 === 0 ? 1 : 0,
      retry_reasons: i % 5 === 0 ? ['rate_limit'] : [],
      recovery_rate: i % 5 === 0 ? 1 : null,
      model_usage: { haiku: tier, sonnet: tier, opus: tier, other: tier },
      by_model: byModel,
      cache_hits: i % 4 === 0 ? 1 : 0,
    },
    outcome: i % 9 === 0 ? 'failure' : 'success',
    outcome_reason: pick(REASONS, i),
    efficiency_score: ((i * 37) % 100) / 100,
    efficiency_factors: [],
    quality_pillars: {
      tool_selection_correct: i % 3 === 0 ? null : i % 11 !== 0,
      tool_reliability_rate: 1,
      memory_retrieval_relevant: null,
      goal_adherence: i % 2 === 0 ? 0.5 + (i % 5) / 10 : null,
    },
    subtree: null,
  });
}

function journalOf(i: number, startedAt: number, endedAt: number, models: string[]) {
  const events: unknown[] = [[1, 'n1', startedAt, 'workflowStart', {}]];
  let seq = 2;
  for (let c = 0; c < CALLS_PER_WORKFLOW; c++) {
    const model = models[c % models.length] as string;
    const at = startedAt + c * 1000;
    events.push([seq++, 'n1', at, 'agentPromptStart', { node: 'n1', attempt: 1, model }]);
    events.push([
      seq++,
      'n1',
      at + 900,
      'agentPromptEnd',
      {
        node: 'n1',
        attempt: 1,
        model,
        duration: 200 + ((i * 131 + c * 977) % 4800),
        requests: 1,
        tokenUsage: { inputTokens: 100, outputTokens: 20 },
        ...(i % 13 === c ? { error: { code: 'PROVIDER_ERROR', message: 'boom' } } : {}),
      },
    ]);
  }
  if (i % 4 === 0) {
    events.push([
      seq++,
      'n1',
      endedAt - 10,
      'cacheHit',
      {
        key: `k${i}`,
        node: 'n1',
        model: models[0],
        tokenUsage: { inputTokens: 50, outputTokens: 10 },
        costSavedUsd: 0.002,
        ...(models[0]?.startsWith('sim/') ? { simulated: true } : {}),
      },
    ]);
  }
  events.push([seq, 'n1', endedAt, 'workflowEnd', { status: 'completed' }]);
  const spans = [
    [`s${i}`, 'n1', null, 'guardrail_span', startedAt, startedAt + 1, 'ok', null, { triggered: i % 17 === 0 }],
  ];
  return { events: JSON.stringify(events), spans: JSON.stringify(spans), lastEvent: seq };
}

/** Writes the history; returns how many workflows it took. */
export function writeUsageHistory(options: HistoryOptions): number {
  const db = openDatabase(options.dbPath, { synchronous: 'NORMAL' });
  db.pragma('foreign_keys = OFF');
  const workflows = Math.ceil(options.calls / CALLS_PER_WORKFLOW);
  const span = options.days * 86_400_000;
  const efficiency = db.prepare(
    `INSERT INTO efficiency (workflow_id, tenant_id, task_type, complexity, outcome, created_at, record,
       efficiency_score, wall_time_seconds, retry_count, cost_usd, simulated_cost_usd)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const reward = db.prepare(
    `INSERT INTO rewards (workflow_id, tenant_id, task_type, complexity, outcome_reward, efficiency_reward,
       preference_reward, aggregate_reward, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const journal = db.prepare(
    'INSERT INTO journal (workflow_id, tenant_id, last_event, events, spans) VALUES (?, ?, ?, ?, ?)',
  );
  const toolCall = db.prepare(
    `INSERT INTO tool_calls (tenant_id, workflow_id, node_id, tool, agent, model, success, latency_ms, result_bytes, at)
     VALUES (?, ?, 'n1', ?, 'a', ?, ?, ?, 100, ?)`,
  );
  const run = db.prepare(
    `INSERT INTO retrieval_runs (tenant_id, workflow_id, node_id, node_name, task_type, agent, model, corpus_id, mode,
       retrieval_calls, steps, loop_exhausted, halt_reason, guard, guard_min_calls, guard_interventions, relevant, at)
     VALUES (?, ?, 'n1', 'look', ?, 'a', ?, 'c1', 'tools', 1, 2, 0, 'finalized', 'none', NULL, 0, ?, ?)`,
  );
  const fill = db.transaction((first: number, last: number) => {
    for (let i = first; i < last; i++) {
      const id = `wf-${options.tenantId}-${i}`;
      const endedAt = options.now - span + Math.floor(((i + 0.5) * span) / workflows);
      const startedAt = endedAt - 5_000;
      const models = i % 3 === 0 ? [pick(MODELS, i), pick(MODELS, i + 1)] : [pick(MODELS, i)];
      const recordText = recordOf(id, i, startedAt, endedAt, models);
      const record = JSON.parse(recordText);
      const j = journalOf(i, startedAt, endedAt, models);
      journal.run(id, options.tenantId, j.lastEvent, j.events, j.spans);
      const cost = models.length * 0.001 * ((i % 7) + 1);
      const simulated = models.filter((m) => m.startsWith('sim/')).length * 0.001 * ((i % 7) + 1);
      const outcomeReward = record.outcome === 'success' ? 1 : -1;
      const preference = i % 6 === 0 ? 0.5 : null;
      const aggregate = outcomeReward * 0.6 + record.efficiency_score * 0.3 + (preference ?? 0) * 0.1;
      reward.run(
        id,
        options.tenantId,
        record.task_type,
        record.complexity,
        outcomeReward,
        record.efficiency_score,
        preference,
        aggregate,
        endedAt,
        endedAt,
      );
      efficiency.run(
        id,
        options.tenantId,
        record.task_type,
        record.complexity,
        record.outcome,
        endedAt,
        recordText,
        record.efficiency_score,
        record.metrics.wall_time_seconds,
        record.metrics.retry_count,
        cost - simulated,
        simulated,
      );
      toolCall.run(options.tenantId, id, 'grep', models[0], 1, 30 + (i % 100), startedAt + 100);
      toolCall.run(options.tenantId, id, 'read', models[0], i % 10 === 0 ? 0 : 1, 10, startedAt + 200);
      if (i % 4 === 0) run.run(options.tenantId, id, record.task_type, models[0], i % 8 === 0 ? 1 : 0, startedAt + 300);
    }
  });
  const BATCH = 5_000;
  for (let first = 0; first < workflows; first += BATCH) fill(first, Math.min(workflows, first + BATCH));
  db.close();
  return workflows;
}
