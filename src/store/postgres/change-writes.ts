import type pg from 'pg';
import { NotFoundError } from '../../domain/errors.js';
import type { ChangeSet, NewWorkflow } from '../../domain/ports.js';
import { draftJournalRows } from '../journal-codec.js';
import { NODE_COLUMNS, nodeValues, WORKFLOW_COLUMNS, workflowValues } from '../workflow-rows.js';
import { agentUseStatements, analyticsStatements, type RowsStatement } from './analytics-writes.js';
import { journalArguments } from './journal.js';
import { nodePatchRows, workflowPatchRows } from './patches.js';

/** The leases a batch's runs write under, for the fence of baton_group_commit. */
export interface BatchLeases {
  owner: string;
  leases: ReadonlyArray<{ workflowId: string; epoch: number }>;
}

const GROUP_COMMIT = {
  name: 'baton_group_commit',
  text: `SELECT baton_group_commit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
    AS lost`,
};

/**
 * Writes change sets — every one a group commit took in — in ONE statement (docs/design.md#storage:
 * a statement on PostgreSQL costs what a whole step costs on SQLite): a call of baton_group_commit
 * (migrations/postgres/0022), its own transaction. It runs the fence, the workflow and node patches
 * with requests taken, the journal rows and event notices itself; the other tables' statements
 * (new workflows before the patches; reflections, metrics, tool analytics, spend after the journal)
 * travel with it as SQL constants and their rows. Returns the roots whose lease the fence found
 * lost: then nothing at all was written.
 */
export async function writeChangeSets(
  pool: pg.Pool,
  sets: readonly ChangeSet[],
  fence: BatchLeases,
  notices: readonly string[],
): Promise<string[]> {
  type Lists = Omit<ChangeSet, 'root'>;
  const all = <K extends keyof Lists>(key: K): NonNullable<Lists[K]> =>
    sets.flatMap((s) => (s[key] ?? []) as never[]) as NonNullable<Lists[K]>;
  const taken = new Map<string, number>();
  for (const t of all('requestsTaken')) taken.set(t.rootWorkflowId, (taken.get(t.rootWorkflowId) ?? 0) + t.count);
  const workflows = workflowPatchRows(all('workflows'), taken);
  const nodes = nodePatchRows(all('nodes'));
  // Drafted per change set: a set's usage belongs to its own journal row.
  const journal = journalArguments(sets.flatMap((s) => draftJournalRows(s)));
  // The order is the SQLite store's: new workflows before what refers to them.
  const before = newWorkflowStatements(all('newWorkflows'));
  const after = [
    ...reflectionStatements(all('reflections'), all('reflectionOutcomes')),
    ...analyticsStatements({
      efficiency: all('efficiency'),
      rewards: all('rewards'),
      toolCalls: all('toolCalls'),
      retrievalRuns: all('retrievalRuns'),
    }),
    ...spendStatements(all('tenantSpend')),
  ];
  try {
    const { rows } = await pool.query<{ lost: string[] }>({
      ...GROUP_COMMIT,
      values: [
        fence.owner,
        fence.leases.map((l) => l.workflowId),
        fence.leases.map((l) => l.epoch),
        before.map((st) => st.sql),
        before.map((st) => st.rows),
        workflows.json,
        workflows.count,
        nodes.json,
        nodes.count,
        journal.rows,
        journal.appendIds,
        journal.firstEvents,
        notices.length === 0 ? null : notices,
        after.map((st) => st.sql),
        after.map((st) => st.rows),
        after.map((st) => st.expect?.count ?? -1),
        after.map((st) => st.expect?.missing ?? ''),
      ],
    });
    return rows[0]?.lost ?? [];
  } catch (err) {
    // The function's own errors become the ones the SQLite store throws for the same bugs.
    const { code, message } = err as { code?: string; message: string };
    if (code === 'BT404') throw new NotFoundError(message);
    if (code === 'BT409') throw new Error(message);
    throw err;
  }
}

const WORKFLOW_TYPES: Record<string, string> = {
  depth: 'int',
  created_at: 'bigint',
  started_at: 'bigint',
  ended_at: 'bigint',
  cancel_requested: 'smallint',
};
const NODE_TYPES: Record<string, string> = {
  position: 'int',
  depth: 'int',
  attempts: 'int',
  started_at: 'bigint',
  ended_at: 'bigint',
};

/** `col type, …` for json_to_recordset, from a column list and the non-text columns' types. */
function recordType(columns: readonly string[], types: Record<string, string>): string {
  return columns.map((c) => `${c} ${types[c] ?? 'text'}`).join(', ');
}

const WORKFLOW_COLUMN_LIST = WORKFLOW_COLUMNS.split(', ');
const NODE_COLUMN_LIST = [...NODE_COLUMNS.split(', '), 'tenant_id'];
const INSERT_WORKFLOWS = `INSERT INTO workflows (${WORKFLOW_COLUMN_LIST.join(', ')})
  SELECT ${WORKFLOW_COLUMN_LIST.join(', ')} FROM json_to_recordset($1) AS r (${recordType(WORKFLOW_COLUMN_LIST, WORKFLOW_TYPES)})`;
const INSERT_NODES = `INSERT INTO nodes (${NODE_COLUMN_LIST.join(', ')})
  SELECT ${NODE_COLUMN_LIST.join(', ')} FROM json_to_recordset($1) AS r (${recordType(NODE_COLUMN_LIST, NODE_TYPES)})`;

/** Rows as JSON objects keyed by column, from the shared positional bind values. */
function rowsOf(columns: readonly string[], values: unknown[][]): string {
  return JSON.stringify(values.map((v) => Object.fromEntries(columns.map((c, i) => [c, v[i]]))));
}

/** The statements creating workflows with their nodes and agent uses; `definitions`: their definitions' JSON. */
export function newWorkflowStatements(
  created: readonly NewWorkflow[],
  definitions: readonly string[] = created.map((c) => JSON.stringify(c.workflow.definition)),
): RowsStatement[] {
  if (created.length === 0) return [];
  const statements: RowsStatement[] = [
    {
      sql: INSERT_WORKFLOWS,
      rows: rowsOf(
        WORKFLOW_COLUMN_LIST,
        created.map((c, i) => workflowValues(c.workflow, definitions[i] as string)),
      ),
    },
  ];
  const nodes = created.flatMap((c) => c.nodes.map((n) => nodeValues(n, c.workflow.tenantId)));
  if (nodes.length > 0) statements.push({ sql: INSERT_NODES, rows: rowsOf(NODE_COLUMN_LIST, nodes) });
  return [...statements, ...agentUseStatements(created.flatMap((c) => c.agentUses ?? []))];
}

function reflectionStatements(
  reflections: NonNullable<ChangeSet['reflections']>,
  outcomes: NonNullable<ChangeSet['reflectionOutcomes']>,
): RowsStatement[] {
  const statements: RowsStatement[] = [];
  if (reflections.length > 0) {
    statements.push({
      sql: `INSERT INTO reflections (id, workflow_id, tenant_id, node_id, node_name, attempt, timestamp, level, reason, error,
         resolution, success)
       SELECT * FROM json_to_recordset($1) AS r (id text, workflow_id text, tenant_id text, node_id text,
         node_name text, attempt int, timestamp bigint, level text, reason text, error text, resolution text,
         success smallint)`,
      rows: JSON.stringify(
        reflections.map((r) => ({
          id: r.id,
          workflow_id: r.workflowId,
          tenant_id: r.tenantId,
          node_id: r.nodeId,
          node_name: r.nodeName,
          attempt: r.attempt,
          timestamp: r.timestamp,
          level: r.level,
          reason: r.reason,
          error: JSON.stringify({ code: r.error.code, message: r.error.message }),
          resolution: JSON.stringify(r.resolution),
          success: r.success === null ? null : r.success ? 1 : 0,
        })),
      ),
    });
  }
  if (outcomes.length > 0) {
    const last = new Map(outcomes.map((o) => [o.id, o.success ? 1 : 0]));
    statements.push({
      // LIMIT: the row count, for the planner (patches.ts says why); a number of ours, not data.
      sql: `UPDATE reflections r SET success = o.success
         FROM (SELECT * FROM json_to_recordset($1) AS x (id text, success smallint) LIMIT ${last.size}) AS o
        WHERE r.id = o.id`,
      rows: JSON.stringify([...last].map(([id, success]) => ({ id, success }))),
      // Like a node patch: an outcome for a missing entry is an engine bug, so fail the change set.
      expect: { count: last.size, missing: `reflection of one of ${[...last.keys()].join(', ')}` },
    });
  }
  return statements;
}

function spendStatements(spend: NonNullable<ChangeSet['tenantSpend']>): RowsStatement[] {
  if (spend.length === 0) return [];
  const byDay = new Map<string, { tenant_id: string; day: number; cost_usd: number }>();
  for (const s of spend) {
    const key = `${s.day}:${s.tenantId}`;
    const row = byDay.get(key) ?? { tenant_id: s.tenantId, day: s.day, cost_usd: 0 };
    row.cost_usd += s.costUsd;
    byDay.set(key, row);
  }
  return [
    {
      sql: `INSERT INTO tenant_spend_days (tenant_id, day, cost_usd)
       SELECT * FROM json_to_recordset($1) AS s (tenant_id text, day int, cost_usd float8)
       ON CONFLICT (tenant_id, day) DO UPDATE SET cost_usd = tenant_spend_days.cost_usd + excluded.cost_usd`,
      rows: JSON.stringify([...byDay.values()]),
    },
  ];
}
