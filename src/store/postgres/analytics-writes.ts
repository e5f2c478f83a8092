import type pg from 'pg';
import type { AgentUse } from '../../domain/agents.js';
import { NotFoundError } from '../../domain/errors.js';
import { recordCostUsd } from '../../domain/metrics.js';
import type { ChangeSet } from '../../domain/ports.js';

/** A connection inside an open transaction. */
export type Tx = Pick<pg.PoolClient, 'query'>;

/**
 * One statement of a write and its rows: `sql` (a constant of this build, never data) takes the
 * rows as its one parameter `$1`, a JSON array expanded by `json_to_recordset`, so a group commit of
 * many runs costs as many statements as one. `expect`: the rows it must touch, else the write fails
 * with `missing` (a NotFoundError's subject).
 */
export interface RowsStatement {
  sql: string;
  rows: string;
  expect?: { count: number; missing: string };
}

/** Runs the statements in order, on a connection inside an open transaction. */
export async function runStatements(tx: Tx, statements: readonly RowsStatement[]): Promise<void> {
  for (const statement of statements) {
    const { rowCount } = await tx.query(statement.sql, [statement.rows]);
    if (statement.expect && rowCount !== statement.expect.count) throw new NotFoundError(statement.expect.missing);
  }
}

/**
 * The analytics rows a commit writes (efficiency records, rewards, tool calls, retrieval runs),
 * one statement per table however many rows.
 */
export function analyticsStatements(
  changes: Pick<ChangeSet, 'efficiency' | 'rewards' | 'toolCalls' | 'retrievalRuns'>,
): RowsStatement[] {
  const { efficiency, rewards, toolCalls, retrievalRuns } = changes;
  const statements: RowsStatement[] = [];
  // Rewards first: the order the SQLite store writes them in (its roll-up reads the reward).
  if (rewards?.length) {
    statements.push({
      sql: `INSERT INTO rewards (workflow_id, tenant_id, task_type, complexity, outcome_reward, efficiency_reward,
         preference_reward, aggregate_reward, created_at, updated_at)
       SELECT * FROM json_to_recordset($1) AS r (workflow_id text, tenant_id text, task_type text, complexity text,
         outcome_reward float8, efficiency_reward float8, preference_reward float8, aggregate_reward float8,
         created_at bigint, updated_at bigint)
       ON CONFLICT (workflow_id) DO UPDATE SET task_type = excluded.task_type, complexity = excluded.complexity,
         outcome_reward = excluded.outcome_reward, efficiency_reward = excluded.efficiency_reward,
         preference_reward = excluded.preference_reward, aggregate_reward = excluded.aggregate_reward,
         updated_at = excluded.updated_at`,
      rows: JSON.stringify(
        lastPerKey(rewards, (r) => r.workflow_id).map((r) => ({
          ...r,
          created_at: Date.parse(r.created_at),
          updated_at: Date.parse(r.updated_at),
        })),
      ),
    });
  }
  if (efficiency?.length) {
    const rows = lastPerKey(efficiency, (r) => r.task_id).map(({ tenant_id, ...record }) => {
      const cost = recordCostUsd(record);
      return {
        workflow_id: record.task_id,
        tenant_id,
        task_type: record.task_type,
        complexity: record.complexity,
        outcome: record.outcome,
        created_at: Date.parse(record.completed_at),
        record: JSON.stringify(record),
        efficiency_score: record.efficiency_score,
        wall_time_seconds: record.metrics.wall_time_seconds,
        retry_count: record.metrics.retry_count,
        cost_usd: cost.real,
        simulated_cost_usd: cost.simulated,
      };
    });
    statements.push({
      sql: `INSERT INTO efficiency (workflow_id, tenant_id, task_type, complexity, outcome, created_at, record,
         efficiency_score, wall_time_seconds, retry_count, cost_usd, simulated_cost_usd)
       SELECT * FROM json_to_recordset($1) AS r (workflow_id text, tenant_id text, task_type text, complexity text,
         outcome text, created_at bigint, record text, efficiency_score float8, wall_time_seconds float8,
         retry_count int, cost_usd float8, simulated_cost_usd float8)
       ON CONFLICT (workflow_id) DO UPDATE SET task_type = excluded.task_type, complexity = excluded.complexity,
         outcome = excluded.outcome, created_at = excluded.created_at, record = excluded.record,
         efficiency_score = excluded.efficiency_score, wall_time_seconds = excluded.wall_time_seconds,
         retry_count = excluded.retry_count, cost_usd = excluded.cost_usd, simulated_cost_usd = excluded.simulated_cost_usd`,
      rows: JSON.stringify(rows),
    });
  }
  if (toolCalls?.length) {
    statements.push({
      sql: `INSERT INTO tool_calls (tenant_id, workflow_id, node_id, tool, agent, model, success, latency_ms, result_bytes, at)
       SELECT "tenantId", "workflowId", "nodeId", tool, agent, model, success::int, "latencyMs", "resultBytes", at
         FROM json_to_recordset($1) AS c ("tenantId" text, "workflowId" text, "nodeId" text, tool text, agent text,
           model text, success boolean, "latencyMs" int, "resultBytes" int, at bigint)`,
      // Rounded here as the SQLite store does (Math.round: halves up); round() on float8 rounds them to even.
      rows: JSON.stringify(toolCalls.map((c) => ({ ...c, latencyMs: Math.round(c.latencyMs) }))),
    });
  }
  if (retrievalRuns?.length) {
    statements.push({
      sql: `INSERT INTO retrieval_runs (tenant_id, workflow_id, node_id, node_name, task_type, agent, model, corpus_id, mode,
         retrieval_calls, steps, loop_exhausted, halt_reason, guard, guard_min_calls, guard_interventions, relevant, at)
       SELECT "tenantId", "workflowId", "nodeId", "nodeName", "taskType", agent, model, "corpusId", mode,
         "retrievalCalls", steps, "loopExhausted"::int, "haltReason", guard, "guardMinCalls", "guardInterventions",
         relevant::int, at
         FROM json_to_recordset($1) AS r ("tenantId" text, "workflowId" text, "nodeId" text, "nodeName" text,
           "taskType" text, agent text, model text, "corpusId" text, mode text, "retrievalCalls" int, steps int,
           "loopExhausted" boolean, "haltReason" text, guard text, "guardMinCalls" int, "guardInterventions" int,
           relevant boolean, at bigint)`,
      rows: JSON.stringify(retrievalRuns),
    });
  }
  return statements;
}

/** The agent uses of workflows being created. */
export function agentUseStatements(uses: readonly AgentUse[]): RowsStatement[] {
  if (uses.length === 0) return [];
  return [
    {
      sql: `INSERT INTO agent_uses (workflow_id, node, tenant_id, agent, version, strategy, role, task_type, complexity,
       scores, reference, saved_usd, saved_simulated_usd, created_at)
     SELECT "workflowId", node, "tenantId", agent, version, strategy, role, "taskType", complexity,
       scores::text, reference, "savedUsd", "savedSimulatedUsd", "createdAt"
       FROM json_to_recordset($1) AS u ("workflowId" text, node text, "tenantId" text, agent text, version int,
         strategy text, role text, "taskType" text, complexity text, scores json, reference text, "savedUsd" float8,
         "savedSimulatedUsd" float8, "createdAt" bigint)`,
      rows: JSON.stringify(uses),
    },
  ];
}

/** One row per key, the last written: an upsert statement may not touch a row twice. */
function lastPerKey<T>(rows: readonly T[], key: (row: T) => string): T[] {
  return [...new Map(rows.map((row) => [key(row), row])).values()];
}
