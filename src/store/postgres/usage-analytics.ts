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
import {
  addDashboardSums,
  addModelSums,
  addTaskModelGroups,
  mergeModelSums,
  periodMs,
  type Segment,
  segmentsOf,
} from '../usage-sums.js';
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
 * (../usage-sums.ts segmentsOf) and the pieces' latencies are added up the same way. What the
 * retention sweep deletes it first folds into per-hour and per-day sums (foldSweptUsage,
 * migrations/postgres/0021) that the whole hours and days of a window add, as SQLite's roll-ups,
 * which retention leaves alone, keep counting swept trees; partial hours read live rows only, as
 * SQLite's raw edges do.
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

/** A piece of a window as ms bounds ([lo, hi)); `bucketed` where SQLite reads roll-ups. */
interface Piece {
  lo: number | null;
  hi: number | null;
  bucketed: boolean;
}

function pieceOf(segment: Segment): Piece {
  return segment.kind === 'raw'
    ? { lo: timeBound(segment.from, '>='), hi: timeBound(segment.to, '<'), bucketed: false }
    : {
        lo: timeBound(segment.from * periodMs(segment.grain), '>='),
        hi: timeBound(segment.to * periodMs(segment.grain), '<'),
        bucketed: true,
      };
}

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

/** Restricts a raw read to some workflows (`$4`): the rows a retention sweep is about to delete. */
const ONLY = (alias: string, n = 4) => `AND ${alias}workflow_id = ANY($${n}::text[])`;

const taskModels = (tx: Tx, params: unknown[]) =>
  all<TaskModelGroup>(
    tx,
    `SELECT e.task_type AS "taskType", m.key AS model, count(*) AS tasks,
              count(*) FILTER (WHERE e.outcome = 'success') AS successes, sum(e.efficiency_score) AS "efficiencyScore"
         FROM efficiency e CROSS JOIN LATERAL jsonb_object_keys(${BY_MODEL}) AS m (key)
        WHERE ${IN_WINDOW} ${params.length > 3 ? ONLY('e.') : ''} GROUP BY e.task_type, m.key`,
    params,
  );

async function rawDashboard(
  tx: Tx,
  tenantId: string,
  from: number,
  to: number,
  only?: readonly string[],
): Promise<DashboardSums> {
  const params: unknown[] = windowParams(tenantId, from, to);
  if (only) params.push([...only]);
  const e = only ? ONLY('e.') : '';
  const r = only ? ONLY('') : '';
  const [records, rewards, toolCalls, relevance, guardrails, cacheHits, byTaskModel, byTaskComplexity] = await inOrder(
    () =>
      one<RecordSumsRow>(
        tx,
        `WITH w AS MATERIALIZED (
             SELECT e.outcome, e.efficiency_score, e.wall_time_seconds, e.cost_usd, e.simulated_cost_usd,
                    e.record::jsonb AS j
               FROM efficiency e WHERE ${IN_WINDOW} ${e})
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
    () =>
      one<NonNullable<Parameters<typeof toDashboardSums>[0]['rewards']>>(
        tx,
        `SELECT count(*) AS count, coalesce(sum(outcome_reward), 0) AS outcome,
                  coalesce(sum(preference_reward), 0) AS preference, count(preference_reward) AS with_preference
             FROM rewards WHERE tenant_id = $1 AND created_at >= $2 AND created_at < $3 ${r}`,
        params,
      ),
    () =>
      one<{ calls: number; successes: number }>(
        tx,
        `SELECT count(*) AS calls, coalesce(sum(success), 0) AS successes
             FROM tool_calls WHERE tenant_id = $1 AND at >= $2 AND at < $3 ${r}`,
        params,
      ),
    () =>
      one<{ judged: number; relevant: number }>(
        tx,
        `SELECT count(relevant) AS judged, coalesce(sum(relevant), 0) AS relevant
             FROM retrieval_runs WHERE tenant_id = $1 AND at >= $2 AND at < $3 ${r}`,
        params,
      ),
    () =>
      one<{ checks: number; passed: number }>(
        tx,
        `SELECT count(*) AS checks, count(*) FILTER (WHERE s -> 8 ->> 'triggered' IN ('false', '0')) AS passed
             FROM efficiency e
             JOIN journal j ON j.workflow_id = e.workflow_id AND j.tenant_id = e.tenant_id AND j.spans IS NOT NULL
             CROSS JOIN LATERAL json_array_elements(j.spans::json) AS s
            WHERE ${IN_WINDOW} ${e} AND json_array_length(s) = 9 AND s ->> 3 = 'guardrail_span'`,
        params,
      ),
    () =>
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
            WHERE ${IN_WINDOW} ${e} AND ev ->> 3 = 'cacheHit'`,
        params,
      ),
    () => taskModels(tx, params),
    () =>
      all<TaskComplexityGroup>(
        tx,
        `SELECT e.task_type AS "taskType", e.complexity, count(*) AS tasks,
                  count(*) FILTER (WHERE e.outcome = 'success') AS successes,
                  sum(e.efficiency_score) AS "efficiencyScore", sum(e.wall_time_seconds) AS "wallTimeSeconds"
             FROM efficiency e WHERE ${IN_WINDOW} ${e} GROUP BY e.task_type, e.complexity`,
        params,
      ),
  );
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
  return modelsOfPieces(tx, tenantId, segmentsOf(window).map(pieceOf));
}

/** The models of each piece: exact durations on raw edges, by bucket in roll-up periods. */
async function modelsOfPieces(
  tx: Tx,
  tenantId: string,
  list: readonly Piece[],
  only?: readonly string[],
): Promise<ModelSums[][]> {
  const lo = list.map((piece) => piece.lo);
  const hi = list.map((piece) => piece.hi);
  const bucketed = list.map((piece) => piece.bucketed);
  const pieces = `unnest($2::bigint[], $3::bigint[], $4::boolean[]) WITH ORDINALITY AS p (lo, hi, bucketed, i)`;
  const inPiece = `e.tenant_id = $1 AND e.created_at >= p.lo AND e.created_at < p.hi ${only ? ONLY('e.', 5) : ''}`;
  const params = [tenantId, lo, hi, bucketed, ...(only ? [[...only]] : [])];
  const [tasks, calls] = await inOrder(
    () =>
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
    () =>
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
  );
  return list.map((piece, index) => {
    const i = index + 1;
    const ended = new Map<string, EndedCalls>();
    for (const row of calls) {
      if (row.i !== i) continue;
      const seen = ended.get(row.model) ?? { ended: 0, failed: 0, durations: [] };
      seen.ended += row.calls;
      if (row.failed === 1) seen.failed += row.calls;
      if (row.ms !== null) {
        if (!piece.bucketed) {
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

/**
 * Runs the steps one after the other, their results in order: statements on one connection go in
 * turn (pg queues them, and calling a client while it runs a query is deprecated).
 */
async function inOrder<T extends unknown[]>(...steps: { [K in keyof T]: () => Promise<T[K]> }): Promise<T> {
  const results: unknown[] = [];
  for (const step of steps) results.push(await step());
  return results as T;
}

const GRAINS = [
  [0, periodMs(0)],
  [1, periodMs(1)],
] as const;

/**
 * Folds what a retention sweep is about to delete into `usage_swept` (migrations/postgres/0021),
 * inside the sweep's transaction: for every hour and day the workflows' rows count in (records by
 * their end, rewards by their creation, tool calls and retrieval runs by when they happened), the
 * dashboard and model figures of just those rows, added to what earlier sweeps left there. The
 * reads add these for a window's whole hours and days, as SQLite's roll-ups keep swept trees.
 */
export async function foldSweptUsage(tx: Tx, workflowIds: readonly string[]): Promise<void> {
  if (workflowIds.length === 0) return;
  const ids = [...workflowIds];
  const { rows: periods } = await tx.query<{ tenant_id: string; grain: 0 | 1; period: number }>(
    `WITH t AS (
       SELECT tenant_id, created_at AS at FROM efficiency WHERE workflow_id = ANY($1::text[])
       UNION SELECT tenant_id, created_at FROM rewards WHERE workflow_id = ANY($1::text[])
       UNION SELECT tenant_id, at FROM tool_calls WHERE workflow_id = ANY($1::text[])
       UNION SELECT tenant_id, at FROM retrieval_runs WHERE workflow_id = ANY($1::text[]))
     SELECT DISTINCT t.tenant_id, g.grain, t.at / g.ms AS period
       FROM t CROSS JOIN unnest($2::smallint[], $3::bigint[]) AS g (grain, ms)
      ORDER BY 1, 2, 3`,
    [ids, GRAINS.map(([grain]) => grain), GRAINS.map(([, ms]) => ms)],
  );
  for (const { tenant_id: tenantId, grain, period } of periods) {
    const ms = periodMs(grain);
    const lo = period * ms;
    const dashboard = await rawDashboard(tx, tenantId, lo, lo + ms, ids);
    const [models] = await modelsOfPieces(tx, tenantId, [{ lo, hi: lo + ms, bucketed: true }], ids);
    // The row first (an empty one when new), then its lock: two sweeps of one period add up in
    // turn instead of the second overwriting the first. Periods go in one order: no deadlock.
    await tx.query(
      `INSERT INTO usage_swept (tenant_id, grain, period, dashboard, models) VALUES ($1, $2, $3, 'null', '[]')
       ON CONFLICT (tenant_id, grain, period) DO NOTHING`,
      [tenantId, grain, period],
    );
    const { rows } = await tx.query<{ dashboard: string; models: string }>(
      'SELECT dashboard, models FROM usage_swept WHERE tenant_id = $1 AND grain = $2 AND period = $3 FOR UPDATE',
      [tenantId, grain, period],
    );
    const before = rows[0];
    const earlier = before === undefined ? null : (JSON.parse(before.dashboard) as DashboardSums | null);
    const summed =
      earlier === null
        ? { dashboard, models: models ?? [] }
        : {
            dashboard: addDashboardSums([earlier, dashboard]),
            models: mergeModelSums([JSON.parse((before as { models: string }).models) as ModelSums[], models ?? []]),
          };
    await tx.query(
      'UPDATE usage_swept SET dashboard = $4, models = $5 WHERE tenant_id = $1 AND grain = $2 AND period = $3',
      [tenantId, grain, period, JSON.stringify(summed.dashboard), JSON.stringify(summed.models)],
    );
  }
}

/** The swept sums in a window's roll-up pieces: `i` is the piece's place among `segments` (1-based). */
async function sweptOf(
  tx: Tx,
  tenantId: string,
  segments: readonly Segment[],
): Promise<Array<{ i: number; dashboard: DashboardSums; models: ModelSums[] }>> {
  const periods = segments.flatMap((s, index) =>
    s.kind === 'rollup'
      ? [{ i: index + 1, grain: s.grain, from: timeBound(s.from, '>='), to: timeBound(s.to, '<') }]
      : [],
  );
  if (periods.length === 0) return [];
  const { rows } = await tx.query<{ i: number; dashboard: string; models: string }>(
    `SELECT p.i, s.dashboard, s.models
       FROM unnest($2::int[], $3::smallint[], $4::bigint[], $5::bigint[]) AS p (i, grain, lo, hi)
       JOIN usage_swept s ON s.tenant_id = $1 AND s.grain = p.grain AND s.period >= p.lo AND s.period < p.hi
        AND s.dashboard <> 'null'
      ORDER BY p.i, s.period`,
    [
      tenantId,
      periods.map((p) => p.i),
      periods.map((p) => p.grain),
      periods.map((p) => p.from),
      periods.map((p) => p.to),
    ],
  );
  return rows.map((row) => ({
    i: row.i,
    dashboard: JSON.parse(row.dashboard) as DashboardSums,
    models: JSON.parse(row.models) as ModelSums[],
  }));
}

export function createPostgresUsageAnalyticsStore(pool: pg.Pool): UsageAnalyticsStore {
  return {
    async dashboard(tenantId, window): Promise<DashboardSums> {
      const segments = segmentsOf(window);
      const [whole, swept] = await inSnapshot(pool, (tx) =>
        inOrder(
          () => rawDashboard(tx, tenantId, window.from, window.to),
          () => sweptOf(tx, tenantId, segments),
        ),
      );
      // The same group order and membership as SQLite's added-up pieces.
      return segments.length === 0 ? whole : addDashboardSums([whole, ...swept.map((s) => s.dashboard)]);
    },

    async taskModels(tenantId, window): Promise<TaskModelGroup[]> {
      const segments = segmentsOf(window);
      if (segments.length === 0) return [];
      const [live, swept] = await inSnapshot(pool, (tx) =>
        inOrder(
          () => taskModels(tx, windowParams(tenantId, window.from, window.to)),
          () => sweptOf(tx, tenantId, segments),
        ),
      );
      return addTaskModelGroups([live, ...swept.map((s) => s.dashboard.byTaskModel)]);
    },

    async toolCalls(tenantId, { from, to }) {
      const params = windowParams(tenantId, from, to);
      const [byToolAgent, pairs, efficiency] = await inSnapshot(pool, (tx) =>
        inOrder(
          // `useful` is NULL for a group whose calls all succeeded without a node row, as in SQLite.
          () =>
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
          () =>
            all<ToolPairCount>(
              tx,
              `SELECT tool, next, count(*) AS count FROM (
             SELECT tool, lead(tool) OVER (PARTITION BY node_id ORDER BY id) AS next
               FROM tool_calls WHERE tenant_id = $1 AND at >= $2 AND at < $3
           ) pairs WHERE next IS NOT NULL
           GROUP BY tool, next ORDER BY tool COLLATE "C", count DESC, next COLLATE "C"`,
              params,
            ),
          () =>
            all<ToolEfficiencySums>(
              tx,
              `SELECT c.tool, count(*) AS workflows, sum(e.efficiency_score) AS "efficiencyScore"
             FROM (SELECT DISTINCT tool, workflow_id FROM tool_calls WHERE tenant_id = $1 AND at >= $2 AND at < $3) c
             JOIN efficiency e ON e.workflow_id = c.workflow_id
            GROUP BY c.tool ORDER BY c.tool COLLATE "C"`,
              params,
            ),
        ),
      );
      return { byToolAgent, pairs, efficiency };
    },

    async models(tenantId, window): Promise<ModelSums[]> {
      const segments = segmentsOf(window);
      if (segments.length === 0) return [];
      const [pieces, swept] = await inSnapshot(pool, (tx) =>
        inOrder(
          () => modelsByPiece(tx, tenantId, window),
          () => sweptOf(tx, tenantId, segments),
        ),
      );
      // A roll-up piece's swept models belong to that piece, as in SQLite's roll-up rows.
      for (const { i, models } of swept) pieces[i - 1] = mergeModelSums([pieces[i - 1] ?? [], models]);
      return addModelSums(pieces);
    },
  };
}

/** Adds `calls` at bucket `ms` (the roll-up's one row per model and bucket). */
function addBucket(durations: DurationCount[], ms: number, calls: number): void {
  const seen = durations.find((d) => d.ms === ms);
  if (seen) seen.calls += calls;
  else durations.push({ ms, calls });
}
