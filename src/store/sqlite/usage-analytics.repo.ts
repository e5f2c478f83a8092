import type { UsageAnalyticsStore } from '../../domain/ports.js';
import type {
  DashboardSums,
  ModelSums,
  TaskComplexityGroup,
  TaskModelGroup,
  ToolAgentSums,
  ToolEfficiencySums,
  ToolPairCount,
} from '../../domain/usage-analytics.js';
import {
  type EndedCalls,
  GATE_FAILED,
  GATE_PASSED,
  type ModelRow,
  type RecordSumsRow,
  toDashboardSums,
  toModelSums,
} from '../usage-rows.js';
import { addDashboardSums, addModelSums, addTaskModelGroups, segmentsOf } from '../usage-sums.js';
import type { Db } from './db.js';
import { createRollupReader } from './usage-rollups.repo.js';

/**
 * The dashboard, tool and model analytics (docs/design.md#events-spans-metrics-and-rewards). The dashboard and model
 * analytics read
 * whole hours and days from the roll-ups (migrations/sqlite/0022, usage-rollups.repo.ts) and only the
 * partial hours at a window's edges with the queries below. Every query starts with an indexed range
 * scan on (tenant_id, time): efficiency_by_tenant_time, rewards_by_tenant_time,
 * tool_calls_by_tenant_time, retrieval_runs_by_tenant_time. Spans and events of the workflows that
 * ended in the window are reached from their efficiency rows through journal_by_workflow, never by
 * scanning the journal (the `events`/`spans` views scan it all).
 *
 * Journal positions (migrations/sqlite/0008): events `[seq, nodeId, at, type, payload]`; a span insert
 * `[spanId, nodeId, parentId, type, startedAt, endedAt, status, error, fields]` (9 entries; guardrail
 * spans are written closed, so their insert holds `triggered`).
 */

const IN_WINDOW = 'e.tenant_id = ? AND e.created_at >= ? AND e.created_at < ?';
/**
 * The time index, always: grouped by task type, the planner would otherwise walk
 * efficiency_by_tenant_type_time over the tenant's whole history to skip a sort of a few rows.
 */
const EFFICIENCY = 'efficiency e INDEXED BY efficiency_by_tenant_time';

interface CallRow {
  model: string;
  ended: number;
  failed: number;
  durations: string;
}

export interface RawUsageQueries {
  dashboard(tenantId: string, from: number, to: number): DashboardSums;
  taskModels(tenantId: string, from: number, to: number): TaskModelGroup[];
  models(tenantId: string, from: number, to: number): ModelSums[];
}

/** The dashboard and model figures of [from, to) straight from the raw rows (the roll-ups' reference). */
export function createRawUsageQueries(db: Db): RawUsageQueries {
  const recordSums = db.prepare<[string, number, number], RecordSumsRow>(
    `SELECT count(*) AS tasks,
            coalesce(sum(outcome = 'success'), 0) AS successes,
            coalesce(sum(efficiency_score), 0) AS efficiency_score,
            coalesce(sum(record ->> '$.metrics.agents_spawned'), 0) AS agents_spawned,
            coalesce(sum(record ->> '$.metrics.total_agent_calls'), 0) AS total_agent_calls,
            coalesce(sum(wall_time_seconds), 0) AS wall_time_seconds,
            coalesce(sum(record ->> '$.metrics.recovery_rate'), 0) AS recovery_sum,
            count(record ->> '$.metrics.recovery_rate') AS recovery_count,
            coalesce(sum(record ->> '$.quality_pillars.goal_adherence'), 0) AS goal_sum,
            count(record ->> '$.quality_pillars.goal_adherence') AS goal_count,
            coalesce(sum(record ->> '$.quality_pillars.tool_selection_correct'), 0) AS selection_sum,
            count(record ->> '$.quality_pillars.tool_selection_correct') AS selection_count,
            coalesce(sum(record ->> '$.outcome_reason' IN (${GATE_PASSED})), 0) AS gates_passed,
            coalesce(sum(record ->> '$.outcome_reason' IN (${GATE_PASSED}, ${GATE_FAILED})), 0) AS gates_count,
            coalesce(sum(cost_usd), 0) AS cost_usd,
            coalesce(sum(simulated_cost_usd), 0) AS simulated_cost_usd
       FROM ${EFFICIENCY} WHERE ${IN_WINDOW}`,
  );
  const byTaskModel = db.prepare<[string, number, number], TaskModelGroup>(
    `SELECT e.task_type AS taskType, m.key AS model, count(*) AS tasks, sum(e.outcome = 'success') AS successes,
            sum(e.efficiency_score) AS efficiencyScore
       FROM ${EFFICIENCY}, json_each(e.record, '$.metrics.by_model') m
      WHERE ${IN_WINDOW}
      GROUP BY e.task_type, m.key ORDER BY e.task_type, m.key`,
  );
  const byTaskComplexity = db.prepare<[string, number, number], TaskComplexityGroup>(
    `SELECT task_type AS taskType, complexity, count(*) AS tasks, sum(outcome = 'success') AS successes,
            sum(efficiency_score) AS efficiencyScore, sum(wall_time_seconds) AS wallTimeSeconds
       FROM ${EFFICIENCY} WHERE ${IN_WINDOW}
      GROUP BY task_type, complexity ORDER BY task_type, complexity`,
  );
  const rewardSums = db.prepare<
    [string, number, number],
    { count: number; outcome: number; preference: number; with_preference: number }
  >(
    `SELECT count(*) AS count, coalesce(sum(outcome_reward), 0) AS outcome,
            coalesce(sum(preference_reward), 0) AS preference, count(preference_reward) AS with_preference
       FROM rewards WHERE tenant_id = ? AND created_at >= ? AND created_at < ?`,
  );
  const toolCallSums = db.prepare<[string, number, number], { calls: number; successes: number }>(
    `SELECT count(*) AS calls, coalesce(sum(success), 0) AS successes
       FROM tool_calls WHERE tenant_id = ? AND at >= ? AND at < ?`,
  );
  const relevance = db.prepare<[string, number, number], { judged: number; relevant: number }>(
    `SELECT count(relevant) AS judged, coalesce(sum(relevant), 0) AS relevant
       FROM retrieval_runs WHERE tenant_id = ? AND at >= ? AND at < ?`,
  );
  const guardrails = db.prepare<[string, number, number], { checks: number; passed: number }>(
    `SELECT count(*) AS checks, coalesce(sum(s.value ->> '$[8].triggered' = 0), 0) AS passed
       FROM ${EFFICIENCY}
       JOIN journal j ON j.workflow_id = e.workflow_id AND j.tenant_id = e.tenant_id AND j.spans IS NOT NULL,
            json_each(j.spans) s
      WHERE ${IN_WINDOW} AND json_array_length(s.value) = 9 AND s.value ->> '$[3]' = 'guardrail_span'`,
  );
  const cacheHits = db.prepare<
    [string, number, number],
    { hits: number; tokens: number; cost: number; simulated_cost: number }
  >(
    `SELECT count(*) AS hits,
            coalesce(sum(coalesce(ev.value ->> '$[4].tokenUsage.inputTokens', 0)
                       + coalesce(ev.value ->> '$[4].tokenUsage.outputTokens', 0)), 0) AS tokens,
            coalesce(sum(CASE WHEN ev.value ->> '$[4].simulated' IS 1 THEN 0 ELSE ev.value ->> '$[4].costSavedUsd' END), 0) AS cost,
            coalesce(sum(CASE WHEN ev.value ->> '$[4].simulated' IS 1 THEN ev.value ->> '$[4].costSavedUsd' ELSE 0 END), 0)
              AS simulated_cost
       FROM ${EFFICIENCY}
       JOIN journal j ON j.workflow_id = e.workflow_id AND j.tenant_id = e.tenant_id AND j.events IS NOT NULL,
            json_each(j.events) ev
      WHERE ${IN_WINDOW} AND ev.value ->> '$[3]' = 'cacheHit'`,
  );
  const modelTasks = db.prepare<[string, number, number], ModelRow>(
    `SELECT m.key AS model,
            (m.key LIKE 'sim/%' OR m.value ->> '$.simulated' IS 1) AS simulated,
            sum(m.value ->> '$.calls') AS calls, sum(m.value ->> '$.tokens_in') AS tokens_in,
            sum(m.value ->> '$.tokens_out') AS tokens_out, sum(m.value ->> '$.cost_usd') AS cost_usd,
            count(*) AS tasks, sum(e.outcome = 'success') AS successful_tasks,
            coalesce(sum(r.aggregate_reward), 0) AS reward_sum, count(r.aggregate_reward) AS reward_count
       FROM ${EFFICIENCY}
       LEFT JOIN rewards r ON r.workflow_id = e.workflow_id AND r.tenant_id = e.tenant_id,
            json_each(e.record, '$.metrics.by_model') m
      WHERE ${IN_WINDOW}
      GROUP BY m.key ORDER BY m.key`,
  );
  const modelCalls = db.prepare<[string, number, number], CallRow>(
    `SELECT model, count(*) AS ended, sum(failed) AS failed, json_group_array(duration) AS durations FROM (
       SELECT ev.value ->> '$[4].model' AS model, ev.value ->> '$[4].duration' AS duration,
              (ev.value -> '$[4].error') IS NOT NULL AS failed
         FROM ${EFFICIENCY}
         JOIN journal j ON j.workflow_id = e.workflow_id AND j.tenant_id = e.tenant_id AND j.events IS NOT NULL,
              json_each(j.events) ev
        WHERE ${IN_WINDOW} AND ev.value ->> '$[3]' = 'agentPromptEnd'
        ORDER BY duration
     ) GROUP BY model`,
  );

  function rawDashboard(tenantId: string, from: number, to: number): DashboardSums {
    return toDashboardSums({
      records: recordSums.get(tenantId, from, to) as RecordSumsRow,
      rewards: rewardSums.get(tenantId, from, to),
      toolCalls: toolCallSums.get(tenantId, from, to),
      relevance: relevance.get(tenantId, from, to),
      guardrails: guardrails.get(tenantId, from, to),
      cacheHits: cacheHits.get(tenantId, from, to),
      byTaskModel: byTaskModel.all(tenantId, from, to),
      byTaskComplexity: byTaskComplexity.all(tenantId, from, to),
    });
  }

  function rawModels(tenantId: string, from: number, to: number): ModelSums[] {
    const ended = new Map<string, EndedCalls>();
    for (const row of modelCalls.all(tenantId, from, to)) {
      const durations = JSON.parse(row.durations) as Array<number | null>;
      ended.set(row.model, {
        ended: row.ended,
        failed: row.failed,
        durations: durations
          .filter((d): d is number => typeof d === 'number')
          .sort((a, b) => a - b)
          .map((ms) => ({ ms, calls: 1 })),
      });
    }
    return toModelSums(modelTasks.all(tenantId, from, to), ended);
  }

  return {
    dashboard: rawDashboard,
    taskModels: (tenantId, from, to) => byTaskModel.all(tenantId, from, to),
    models: rawModels,
  };
}

export function createSqliteUsageAnalyticsStore(db: Db): UsageAnalyticsStore {
  const toolAgent = db.prepare<[string, number, number], ToolAgentSums>(
    `SELECT c.tool, c.agent, count(*) AS calls, sum(c.success) AS successes, sum(c.latency_ms) AS latencyMs,
            sum(c.success = 1 AND n.status = 'completed') AS useful
       FROM tool_calls c LEFT JOIN nodes n ON n.id = c.node_id
      WHERE c.tenant_id = ? AND c.at >= ? AND c.at < ?
      GROUP BY c.tool, c.agent ORDER BY c.tool, c.agent`,
  );
  const toolPairs = db.prepare<[string, number, number], ToolPairCount>(
    `SELECT tool, next, count(*) AS count FROM (
       SELECT tool, lead(tool) OVER (PARTITION BY node_id ORDER BY id) AS next
         FROM tool_calls WHERE tenant_id = ? AND at >= ? AND at < ?
     ) WHERE next IS NOT NULL
     GROUP BY tool, next ORDER BY tool, count DESC, next`,
  );
  const toolEfficiency = db.prepare<[string, number, number], ToolEfficiencySums>(
    `SELECT c.tool, count(*) AS workflows, sum(e.efficiency_score) AS efficiencyScore
       FROM (SELECT DISTINCT tool, workflow_id FROM tool_calls WHERE tenant_id = ? AND at >= ? AND at < ?) c
       JOIN efficiency e ON e.workflow_id = c.workflow_id
      GROUP BY c.tool ORDER BY c.tool`,
  );
  const raw = createRawUsageQueries(db);
  const rollups = createRollupReader(db);

  return {
    async dashboard(tenantId, window): Promise<DashboardSums> {
      const segments = segmentsOf(window);
      if (segments.length === 0) return raw.dashboard(tenantId, window.from, window.to);
      return addDashboardSums(
        segments.map((s) =>
          s.kind === 'raw' ? raw.dashboard(tenantId, s.from, s.to) : rollups.dashboard(tenantId, s),
        ),
      );
    },

    async taskModels(tenantId, window): Promise<TaskModelGroup[]> {
      return addTaskModelGroups(
        segmentsOf(window).map((s) =>
          s.kind === 'raw' ? raw.taskModels(tenantId, s.from, s.to) : rollups.taskModels(tenantId, s),
        ),
      );
    },

    async toolCalls(tenantId, { from, to }) {
      return {
        byToolAgent: toolAgent.all(tenantId, from, to),
        pairs: toolPairs.all(tenantId, from, to),
        efficiency: toolEfficiency.all(tenantId, from, to),
      };
    },

    async models(tenantId, window): Promise<ModelSums[]> {
      const segments = segmentsOf(window);
      if (segments.length === 0) return raw.models(tenantId, window.from, window.to);
      return addModelSums(
        segments.map((s) => (s.kind === 'raw' ? raw.models(tenantId, s.from, s.to) : rollups.models(tenantId, s))),
      );
    },
  };
}
