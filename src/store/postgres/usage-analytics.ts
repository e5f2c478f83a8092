import type pg from 'pg';
import type { UsageAnalyticsStore } from '../../domain/ports.js';
import type {
  DashboardSums,
  DurationCount,
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
import { addDashboardSums, addModelSums, addTaskModelGroups, periodMs, segmentsOf } from '../usage-sums.js';
import type { Tx } from './analytics-writes.js';
import { inSnapshot, timeBound } from './transaction.js';

/**
 * The dashboard, tool and model analytics on PostgreSQL, by direct aggregates over the indexed
 * (tenant_id, time) ranges of the raw rows — no roll-up tables. SQLite keeps trigger-fed roll-ups
 * so a long window reads ~180 day rows instead of every record; here a read of the window's rows
 * is an index range scan the server runs while the instance waits, and roll-ups would put a
 * read-modify-write of hot per-tenant rows into every engine commit (the per-step cost scale-out
 * must keep down, and a row lock all of a tenant's instances' commits would queue on). The answers
 * are the SQLite store's for the same rows: the same sums and groups (floating sums may differ in
 * the last bits: the order of summation differs), and model latencies bucketed as the roll-ups
 * bucket them where SQLite reads roll-ups — the window is cut into the same pieces
 * (../usage-sums.ts segmentsOf) and the pieces' latencies are added up the same way.
 *
 * A report's statements run in one read-only snapshot on one pooled connection (inSnapshot): its
 * figures are of one moment, and a burst of dashboards cannot take the connections the engine's
 * commits need.
 *
 * Journal positions (../journal-codec.ts): events `[seq, nodeId, at, type, payload]`; a span
 * insert has 9 entries (guardrail spans are written closed, so theirs holds `triggered`). Spans and
 * events are reached from the window's efficiency rows through journal_by_workflow. Text is ordered
 * `COLLATE "C"`, SQLite's bytewise order.
 */

const IN_WINDOW = 'e.tenant_id = $1 AND e.created_at >= $2 AND e.created_at < $3';
/** `by_model` of a record, an object or nothing (never an error on an odd record). */
const BY_MODEL = `(CASE WHEN jsonb_typeof(e.record::jsonb #> '{metrics,by_model}') = 'object'
  THEN e.record::jsonb #> '{metrics,by_model}' END)`;
/** SQLite's LIKE 'sim/%' is ASCII case-insensitive; so is this, in any locale. */
const SIMULATED = `(upper(left(m.key, 4) COLLATE "C") = 'SIM/' OR m.value ->> 'simulated' = 'true')`;

/** A latency's roll-up bucket: 1.1^floor(log_1.1 d), as migrations/sqlite/0022 computes it (libm both). */
const BUCKET = `CASE WHEN d > 0 THEN power(1.1::float8, floor(ln(d) / ln(1.1::float8))) ELSE d END`;

interface RangeRow {
  i: number;
}

export function createPostgresUsageAnalyticsStore(pool: pg.Pool): UsageAnalyticsStore {
  const one = async <R extends object>(tx: Tx, sql: string, params: unknown[]): Promise<R | undefined> =>
    (await tx.query<R>(sql, params)).rows[0];
  const all = async <R extends object>(tx: Tx, sql: string, params: unknown[]): Promise<R[]> =>
    (await tx.query<R>(sql, params)).rows;

  /** [from, to) as BIGINT parameters selecting what SQLite's comparison with the numbers does. */
  const windowParams = (tenantId: string, from: number, to: number) => [
    tenantId,
    timeBound(from, '>='),
    timeBound(to, '<'),
  ];

  const taskModels = (tx: Tx, params: unknown[]) =>
    all<TaskModelGroup>(
      tx,
      `SELECT e.task_type AS "taskType", m.key AS model, count(*) AS tasks,
              count(*) FILTER (WHERE e.outcome = 'success') AS successes, sum(e.efficiency_score) AS "efficiencyScore"
         FROM efficiency e CROSS JOIN LATERAL jsonb_object_keys(${BY_MODEL}) AS m (key)
        WHERE ${IN_WINDOW} GROUP BY e.task_type, m.key`,
      params,
    );

  async function rawDashboard(tx: Tx, tenantId: string, from: number, to: number): Promise<DashboardSums> {
    const params = windowParams(tenantId, from, to);
    const [records, rewards, toolCalls, relevance, guardrails, cacheHits, byTaskModel, byTaskComplexity] =
      await Promise.all([
        one<RecordSumsRow>(
          tx,
          `WITH w AS MATERIALIZED (
             SELECT e.outcome, e.efficiency_score, e.wall_time_seconds, e.cost_usd, e.simulated_cost_usd,
                    e.record::jsonb AS j
               FROM efficiency e WHERE ${IN_WINDOW})
           SELECT count(*) AS tasks, count(*) FILTER (WHERE outcome = 'success') AS successes,
                  coalesce(sum(efficiency_score), 0) AS efficiency_score,
                  coalesce(sum((j #>> '{metrics,agents_spawned}')::float8), 0) AS agents_spawned,
                  coalesce(sum((j #>> '{metrics,total_agent_calls}')::float8), 0) AS total_agent_calls,
                  coalesce(sum(wall_time_seconds), 0) AS wall_time_seconds,
                  coalesce(sum((j #>> '{metrics,recovery_rate}')::float8), 0) AS recovery_sum,
                  count(j #>> '{metrics,recovery_rate}') AS recovery_count,
                  coalesce(sum((j #>> '{quality_pillars,goal_adherence}')::float8), 0) AS goal_sum,
                  count(j #>> '{quality_pillars,goal_adherence}') AS goal_count,
                  coalesce(sum(CASE j #>> '{quality_pillars,tool_selection_correct}' WHEN 'true' THEN 1 WHEN 'false' THEN 0 END), 0)
                    AS selection_sum,
                  count(j #>> '{quality_pillars,tool_selection_correct}') AS selection_count,
                  count(*) FILTER (WHERE j ->> 'outcome_reason' IN (${GATE_PASSED})) AS gates_passed,
                  count(*) FILTER (WHERE j ->> 'outcome_reason' IN (${GATE_PASSED}, ${GATE_FAILED})) AS gates_count,
                  coalesce(sum(cost_usd), 0) AS cost_usd, coalesce(sum(simulated_cost_usd), 0) AS simulated_cost_usd
             FROM w`,
          params,
        ),
        one<NonNullable<Parameters<typeof toDashboardSums>[0]['rewards']>>(
          tx,
          `SELECT count(*) AS count, coalesce(sum(outcome_reward), 0) AS outcome,
                  coalesce(sum(preference_reward), 0) AS preference, count(preference_reward) AS with_preference
             FROM rewards WHERE tenant_id = $1 AND created_at >= $2 AND created_at < $3`,
          params,
        ),
        one<{ calls: number; successes: number }>(
          tx,
          `SELECT count(*) AS calls, coalesce(sum(success), 0) AS successes
             FROM tool_calls WHERE tenant_id = $1 AND at >= $2 AND at < $3`,
          params,
        ),
        one<{ judged: number; relevant: number }>(
          tx,
          `SELECT count(relevant) AS judged, coalesce(sum(relevant), 0) AS relevant
             FROM retrieval_runs WHERE tenant_id = $1 AND at >= $2 AND at < $3`,
          params,
        ),
        one<{ checks: number; passed: number }>(
          tx,
          `SELECT count(*) AS checks, count(*) FILTER (WHERE s -> 8 ->> 'triggered' IN ('false', '0')) AS passed
             FROM efficiency e
             JOIN journal j ON j.workflow_id = e.workflow_id AND j.tenant_id = e.tenant_id AND j.spans IS NOT NULL
             CROSS JOIN LATERAL json_array_elements(j.spans::json) AS s
            WHERE ${IN_WINDOW} AND json_array_length(s) = 9 AND s ->> 3 = 'guardrail_span'`,
          params,
        ),
        one<{ hits: number; tokens: number; cost: number; simulated_cost: number }>(
          tx,
          `SELECT count(*) AS hits,
                  coalesce(sum(coalesce((ev #>> '{4,tokenUsage,inputTokens}')::float8, 0)
                             + coalesce((ev #>> '{4,tokenUsage,outputTokens}')::float8, 0)), 0) AS tokens,
                  coalesce(sum(CASE WHEN ev #>> '{4,simulated}' = 'true' THEN 0 ELSE (ev #>> '{4,costSavedUsd}')::float8 END), 0)
                    AS cost,
                  coalesce(sum(CASE WHEN ev #>> '{4,simulated}' = 'true' THEN (ev #>> '{4,costSavedUsd}')::float8 ELSE 0 END), 0)
                    AS simulated_cost
             FROM efficiency e
             JOIN journal j ON j.workflow_id = e.workflow_id AND j.tenant_id = e.tenant_id AND j.events IS NOT NULL
             CROSS JOIN LATERAL json_array_elements(j.events::json) AS ev
            WHERE ${IN_WINDOW} AND ev ->> 3 = 'cacheHit'`,
          params,
        ),
        taskModels(tx, params),
        all<TaskComplexityGroup>(
          tx,
          `SELECT e.task_type AS "taskType", e.complexity, count(*) AS tasks,
                  count(*) FILTER (WHERE e.outcome = 'success') AS successes,
                  sum(e.efficiency_score) AS "efficiencyScore", sum(e.wall_time_seconds) AS "wallTimeSeconds"
             FROM efficiency e WHERE ${IN_WINDOW} GROUP BY e.task_type, e.complexity`,
          params,
        ),
      ]);
    return toDashboardSums({
      records: records as RecordSumsRow,
      rewards,
      toolCalls,
      relevance,
      guardrails,
      cacheHits,
      byTaskModel,
      byTaskComplexity,
    });
  }

  /**
   * The models of each piece of the window, as SQLite answers that piece: a raw edge from its rows
   * (every ended call's exact duration), a roll-up period from its roll-up rows (durations by
   * bucket) — here both from the rows, in two statements for all pieces.
   */
  async function modelsByPiece(tx: Tx, tenantId: string, window: { from: number; to: number }): Promise<ModelSums[][]> {
    const segments = segmentsOf(window);
    const lo: Array<number | null> = [];
    const hi: Array<number | null> = [];
    for (const s of segments) {
      if (s.kind === 'raw') {
        lo.push(timeBound(s.from, '>='));
        hi.push(timeBound(s.to, '<'));
      } else {
        lo.push(timeBound(s.from * periodMs(s.grain), '>='));
        hi.push(timeBound(s.to * periodMs(s.grain), '<'));
      }
    }
    const bucketed = segments.map((s) => s.kind === 'rollup');
    const pieces = `unnest($2::bigint[], $3::bigint[], $4::boolean[]) WITH ORDINALITY AS p (lo, hi, bucketed, i)`;
    const inPiece = 'e.tenant_id = $1 AND e.created_at >= p.lo AND e.created_at < p.hi';
    const params = [tenantId, lo, hi, bucketed];
    const [tasks, calls] = await Promise.all([
      all<ModelRow & RangeRow>(
        tx,
        `SELECT p.i, m.key AS model, max(${SIMULATED}::int) AS simulated,
                coalesce(sum((m.value ->> 'calls')::float8), 0) AS calls,
                coalesce(sum((m.value ->> 'tokens_in')::float8), 0) AS tokens_in,
                coalesce(sum((m.value ->> 'tokens_out')::float8), 0) AS tokens_out,
                coalesce(sum((m.value ->> 'cost_usd')::float8), 0) AS cost_usd,
                count(*) AS tasks, count(*) FILTER (WHERE e.outcome = 'success') AS successful_tasks,
                coalesce(sum(r.aggregate_reward), 0) AS reward_sum, count(r.aggregate_reward) AS reward_count
           FROM ${pieces}
           JOIN efficiency e ON ${inPiece}
           LEFT JOIN rewards r ON r.workflow_id = e.workflow_id AND r.tenant_id = e.tenant_id
           CROSS JOIN LATERAL jsonb_each(${BY_MODEL}) AS m
          GROUP BY p.i, m.key ORDER BY p.i, m.key COLLATE "C"`,
        params,
      ),
      all<RangeRow & { model: string; failed: number; ms: number | null; calls: number }>(
        tx,
        `WITH ends AS (
           SELECT p.i, p.bucketed, ev -> 4 ->> 'model' AS model, ((ev -> 4 -> 'error') IS NOT NULL)::int AS failed,
                  CASE WHEN json_typeof(ev -> 4 -> 'duration') = 'number' THEN (ev -> 4 ->> 'duration')::float8 END AS d
             FROM ${pieces}
             JOIN efficiency e ON ${inPiece}
             JOIN journal j ON j.workflow_id = e.workflow_id AND j.tenant_id = e.tenant_id AND j.events IS NOT NULL
             CROSS JOIN LATERAL json_array_elements(j.events::json) AS ev
            WHERE ev ->> 3 = 'agentPromptEnd')
         SELECT i, model, failed, CASE WHEN bucketed THEN ${BUCKET} ELSE d END AS ms, count(*) AS calls
           FROM ends WHERE model IS NOT NULL GROUP BY 1, 2, 3, 4`,
        params,
      ),
    ]);
    return segments.map((segment, index) => {
      const i = index + 1;
      const ended = new Map<string, EndedCalls>();
      for (const row of calls) {
        if (row.i !== i) continue;
        const seen = ended.get(row.model) ?? { ended: 0, failed: 0, durations: [] };
        seen.ended += row.calls;
        if (row.failed === 1) seen.failed += row.calls;
        if (row.ms !== null) {
          if (segment.kind === 'raw') {
            for (let n = 0; n < row.calls; n++) seen.durations.push({ ms: row.ms, calls: 1 });
          } else {
            addBucket(seen.durations, row.ms, row.calls);
          }
        }
        ended.set(row.model, seen);
      }
      for (const e of ended.values()) e.durations.sort((a, b) => a.ms - b.ms);
      return toModelSums(
        tasks.filter((row) => row.i === i).map(({ i: _i, ...row }) => row),
        ended,
      );
    });
  }

  return {
    async dashboard(tenantId, window): Promise<DashboardSums> {
      const whole = await inSnapshot(pool, (tx) => rawDashboard(tx, tenantId, window.from, window.to));
      // The same group order and membership as SQLite's added-up pieces.
      return segmentsOf(window).length === 0 ? whole : addDashboardSums([whole]);
    },

    async taskModels(tenantId, window): Promise<TaskModelGroup[]> {
      if (segmentsOf(window).length === 0) return [];
      return addTaskModelGroups([await taskModels(pool, windowParams(tenantId, window.from, window.to))]);
    },

    async toolCalls(tenantId, { from, to }) {
      const params = windowParams(tenantId, from, to);
      const [byToolAgent, pairs, efficiency] = await inSnapshot(pool, (tx) =>
        Promise.all([
          // `useful` is NULL for a group whose calls all succeeded without a node row, as in SQLite.
          all<ToolAgentSums>(
            tx,
            `SELECT c.tool, c.agent, count(*) AS calls, sum(c.success) AS successes, sum(c.latency_ms) AS "latencyMs",
                  sum(CASE WHEN c.success = 1 AND n.status = 'completed' THEN 1
                           WHEN c.success <> 1 OR n.status <> 'completed' THEN 0 END) AS useful
             FROM tool_calls c LEFT JOIN nodes n ON n.id = c.node_id
            WHERE c.tenant_id = $1 AND c.at >= $2 AND c.at < $3
            GROUP BY c.tool, c.agent ORDER BY c.tool COLLATE "C", c.agent COLLATE "C"`,
            params,
          ),
          all<ToolPairCount>(
            tx,
            `SELECT tool, next, count(*) AS count FROM (
             SELECT tool, lead(tool) OVER (PARTITION BY node_id ORDER BY id) AS next
               FROM tool_calls WHERE tenant_id = $1 AND at >= $2 AND at < $3
           ) pairs WHERE next IS NOT NULL
           GROUP BY tool, next ORDER BY tool COLLATE "C", count DESC, next COLLATE "C"`,
            params,
          ),
          all<ToolEfficiencySums>(
            tx,
            `SELECT c.tool, count(*) AS workflows, sum(e.efficiency_score) AS "efficiencyScore"
             FROM (SELECT DISTINCT tool, workflow_id FROM tool_calls WHERE tenant_id = $1 AND at >= $2 AND at < $3) c
             JOIN efficiency e ON e.workflow_id = c.workflow_id
            GROUP BY c.tool ORDER BY c.tool COLLATE "C"`,
            params,
          ),
        ]),
      );
      return { byToolAgent, pairs, efficiency };
    },

    async models(tenantId, window): Promise<ModelSums[]> {
      if (segmentsOf(window).length === 0) return [];
      return addModelSums(await inSnapshot(pool, (tx) => modelsByPiece(tx, tenantId, window)));
    },
  };
}

/** Adds `calls` at bucket `ms` (the roll-up's one row per model and bucket). */
function addBucket(durations: DurationCount[], ms: number, calls: number): void {
  const seen = durations.find((d) => d.ms === ms);
  if (seen) seen.calls += calls;
  else durations.push({ ms, calls });
}
