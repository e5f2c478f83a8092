import { LRUCache } from 'lru-cache';
import type pg from 'pg';
import type { WorkflowDefinition } from '../../domain/definition.js';
import { NotFoundError, ValidationError } from '../../domain/errors.js';
import type { CreateResult, Page, WorkflowFilter, WorkflowStore } from '../../domain/ports.js';
import type { WorkflowRecord } from '../../domain/records.js';
import { decodeKeyset, encodeKeyset } from '../keyset.js';
import { REFLECTION_COLUMNS, type ReflectionRow, toReflectionEntry } from '../reflection-rows.js';
import {
  type IdempotencyRow,
  NODE_COLUMNS,
  type NodeRow,
  parseDefinition,
  toNode,
  toWorkflow,
  WORKFLOW_READ_COLUMNS,
  type WorkflowRow,
} from '../workflow-rows.js';
import type { Tx } from './analytics-writes.js';
import { runStatements } from './analytics-writes.js';
import { newWorkflowStatements } from './change-writes.js';
import type { PostgresCommitter } from './group-commit.js';
import { journalEvents, journalLastSeq, journalRequestsSent } from './journal.js';
import { prepared } from './prepared.js';

/**
 * The WorkflowStore on PostgreSQL: the SQLite store's rows and answers (the contract suites in
 * test/contracts/ hold both to them), its writes through the group committer (group-commit.ts).
 */
const LIST_FILTERS = [
  ['status', 'status'],
  ['name', 'name'],
  ['correlationId', 'correlation_id'],
  ['parentWorkflowId', 'parent_workflow_id'],
] as const;

/** Thrown inside a create's transaction (rolling it back) when a racing create took its idempotency key. */
const KEY_TAKEN = new Error('idempotency key taken by a concurrent create');

async function liveKey(tx: Tx, tenantId: string, key: string, notBefore: number): Promise<IdempotencyRow | undefined> {
  const { rows } = await tx.query<IdempotencyRow>(
    'SELECT body_hash, workflow_id, created_at FROM idempotency_keys WHERE tenant_id = $1 AND key = $2',
    [tenantId, key],
  );
  const row = rows[0];
  return row !== undefined && row.created_at >= notBefore ? row : undefined;
}

function keyAnswer(existing: IdempotencyRow, bodyHash: string): CreateResult | { kind: 'replayedId'; id: string } {
  return existing.body_hash === bodyHash
    ? { kind: 'replayedId', id: existing.workflow_id }
    : { kind: 'conflict', workflowId: existing.workflow_id };
}

const DEFINITION_CACHE_ENTRIES = 1000;
const DEFINITION_CACHE_BYTES = 8 * 1024 * 1024;

export function createPostgresWorkflowStore(pool: pg.Pool, committer: PostgresCommitter): WorkflowStore {
  // A workflow's definition never changes once stored: parsed once, then served from here.
  const definitions = new LRUCache<string, WorkflowDefinition>({
    max: DEFINITION_CACHE_ENTRIES,
    maxSize: DEFINITION_CACHE_BYTES,
  });
  const remember = (id: string, definition: WorkflowDefinition, bytes: number): WorkflowDefinition => {
    definitions.set(id, definition, { size: Math.max(1, bytes) });
    return definition;
  };

  async function toRecords(rows: readonly WorkflowRow[]): Promise<WorkflowRecord[]> {
    const missing = rows.filter((r) => !definitions.has(r.id)).map((r) => r.id);
    if (missing.length > 0) {
      const { rows: texts } = await pool.query<{ id: string; definition: string }>(
        prepared('SELECT id, definition FROM workflows WHERE id = ANY($1::text[])', [missing]),
      );
      for (const t of texts) remember(t.id, parseDefinition(t.definition), t.definition.length);
    }
    return rows.map((row) => {
      const definition = definitions.get(row.id);
      if (definition === undefined) throw new NotFoundError(`workflow ${row.id}`);
      return toWorkflow(row, definition);
    });
  }
  const toRecord = async (row: WorkflowRow): Promise<WorkflowRecord> => (await toRecords([row]))[0] as WorkflowRecord;

  /** `fixed`: the text is one of the code's own, not built per call, so it is kept prepared. */
  async function selectWorkflows(
    where: string,
    params: unknown[],
    tail = 'ORDER BY id',
    fixed = true,
  ): Promise<WorkflowRecord[]> {
    const text = `SELECT ${WORKFLOW_READ_COLUMNS} FROM workflows WHERE ${where} ${tail}`;
    const { rows } = await pool.query<WorkflowRow>(fixed ? prepared(text, params) : { text, values: params });
    return toRecords(rows);
  }

  async function selectOne(where: string, params: unknown[]): Promise<WorkflowRecord | undefined> {
    return (await selectWorkflows(where, params, ''))[0];
  }

  return {
    async create(created, claim): Promise<CreateResult> {
      const { workflow } = created;
      const text = JSON.stringify(workflow.definition);
      if (claim === undefined) {
        // No key to take: the rows ride in the next group commit, one statement.
        await committer.commit({ newWorkflows: [created] });
        remember(workflow.id, workflow.definition, text.length);
        return { kind: 'created', workflow };
      }
      const outcome = await committer
        .transaction(async (tx): Promise<CreateResult | { kind: 'replayedId'; id: string }> => {
          const existing = await liveKey(tx, workflow.tenantId, claim.key, claim.notBefore);
          if (existing !== undefined) return keyAnswer(existing, claim.bodyHash);
          await runStatements(tx, newWorkflowStatements([created], [text]));
          // Takes the key, or replaces an expired one in place. A create racing on the same key
          // waits here for the other's commit, then finds the key live: nothing of it is written.
          const taken = await tx.query(
            `INSERT INTO idempotency_keys (tenant_id, key, body_hash, workflow_id, created_at) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (tenant_id, key) DO UPDATE
             SET body_hash = excluded.body_hash, workflow_id = excluded.workflow_id, created_at = excluded.created_at
             WHERE idempotency_keys.created_at < $6`,
            [workflow.tenantId, claim.key, claim.bodyHash, workflow.id, workflow.createdAt, claim.notBefore],
          );
          if (taken.rowCount !== 1) throw KEY_TAKEN;
          return { kind: 'created', workflow };
        })
        .catch(async (err: unknown) => {
          if (err !== KEY_TAKEN) throw err;
          const existing = await liveKey(pool, workflow.tenantId, claim.key, claim.notBefore);
          if (existing === undefined) throw new Error(`idempotency key ${claim.key}: taken, then gone`);
          return keyAnswer(existing, claim.bodyHash);
        });
      if (outcome.kind === 'created') remember(workflow.id, workflow.definition, text.length);
      if (outcome.kind !== 'replayedId') return outcome;
      const row = await selectOne('id = $1', [outcome.id]);
      // The foreign key guarantees the row; a miss means the database was edited by hand.
      if (row === undefined) throw new NotFoundError(`workflow ${outcome.id}`);
      return { kind: 'replayed', workflow: row };
    },

    commit: (changes) => committer.commit(changes),

    get: (tenantId, id) => selectOne('id = $1 AND tenant_id = $2', [id, tenantId]),

    getById: (id) => selectOne('id = $1', [id]),

    async list(tenantId, filter: WorkflowFilter, cursor, limit): Promise<Page<WorkflowRecord>> {
      if (!Number.isInteger(limit) || limit < 1) {
        throw new ValidationError('Invalid limit', [{ path: 'limit', message: 'must be a positive integer' }]);
      }
      const params: unknown[] = [tenantId];
      const conditions = ['tenant_id = $1'];
      for (const [key, column] of LIST_FILTERS) {
        const value = filter[key];
        if (value === undefined) continue;
        params.push(value);
        conditions.push(`${column} = $${params.length}`);
      }
      if (cursor !== null) {
        params.push(...decodeKeyset(cursor, ['string']));
        conditions.push(`id < $${params.length}`);
      }
      // One extra row tells whether another page exists without a count query.
      params.push(limit + 1);
      const rows = await selectWorkflows(
        conditions.join(' AND '),
        params,
        `ORDER BY id DESC LIMIT $${params.length}`,
        false,
      );
      const hasMore = rows.length > limit;
      const items = hasMore ? rows.slice(0, limit) : rows;
      const last = items.at(-1);
      return { items, nextCursor: hasMore && last !== undefined ? encodeKeyset([last.id]) : null };
    },

    async nodes(workflowId) {
      const { rows } = await pool.query<NodeRow>(
        prepared(`SELECT ${NODE_COLUMNS} FROM nodes WHERE workflow_id = $1 ORDER BY id`, [workflowId]),
      );
      return rows.map(toNode);
    },

    events: (workflowId, after, limit) => journalEvents(pool, workflowId, after, limit),
    lastSeq: (workflowId) => journalLastSeq(pool, workflowId),
    requestsSent: (workflowId) => journalRequestsSent(pool, workflowId),

    async requestsTaken(rootWorkflowId) {
      const { rows } = await pool.query<{ n: number }>('SELECT llm_requests_taken AS n FROM workflows WHERE id = $1', [
        rootWorkflowId,
      ]);
      return rows[0]?.n ?? 0;
    },

    async tenantSpendUsd(tenantId, day) {
      const { rows } = await pool.query<{ cost: number }>(
        'SELECT cost_usd AS cost FROM tenant_spend_days WHERE tenant_id = $1 AND day = $2',
        [tenantId, day],
      );
      return rows[0]?.cost ?? 0;
    },

    async requestCancel(id) {
      const ids = await committer.transaction(async (tx) => {
        const { rows } = await tx.query<{ id: string }>(
          `WITH RECURSIVE tree (id) AS (
             SELECT id FROM workflows WHERE id = $1
             UNION SELECT w.id FROM workflows w JOIN tree ON w.parent_workflow_id = tree.id
           )
           UPDATE workflows SET cancel_requested = 1, parked = 0 WHERE id IN (SELECT id FROM tree) RETURNING id`,
          [id],
        );
        return rows.map((r) => r.id);
      });
      // Time-ordered ids: sorting puts the requested workflow before its descendants.
      return ids.sort();
    },

    async decideCheckpoint(tenantId, id, decision) {
      const { decided, row } = await committer.transaction(async (tx) => {
        const update = await tx.query(
          `UPDATE workflows SET checkpoint = $1, parked = 0
            WHERE id = $2 AND tenant_id = $3 AND status = 'idle' AND cancel_requested = 0
              AND (checkpoint::json ->> 'state') = 'pending'`,
          [JSON.stringify(decision), id, tenantId],
        );
        const { rows } = await tx.query<WorkflowRow>(
          `SELECT ${WORKFLOW_READ_COLUMNS} FROM workflows WHERE id = $1 AND tenant_id = $2`,
          [id, tenantId],
        );
        return { decided: update.rowCount === 1, row: rows[0] };
      });
      return row && { decided, workflow: await toRecord(row) };
    },

    async requestReflection(tenantId, request, maxPerNode) {
      const { id, workflowId, nodeId, reason, requestedAt } = request;
      const { reopened, row } = await committer.transaction(async (tx) => {
        // The row lock serializes racing requests: the second sees the first's count and status.
        const update = await tx.query(
          `UPDATE workflows SET status = 'running', output = NULL, error = NULL, ended_at = NULL
            WHERE id = $1 AND tenant_id = $2 AND status = 'failed' AND cancel_requested = 0
              AND EXISTS (SELECT 1 FROM nodes WHERE id = $3 AND workflow_id = workflows.id AND status = 'failed')
              AND (SELECT count(*) FROM reflection_requests WHERE workflow_id = workflows.id AND node_id = $3) < $4`,
          [workflowId, tenantId, nodeId, maxPerNode],
        );
        const reopened = update.rowCount === 1;
        if (reopened) {
          await tx.query(
            `INSERT INTO reflection_requests (id, workflow_id, tenant_id, node_id, reason, requested_at)
             VALUES ($1, $2, $3, $4, $5, $6)`,
            [id, workflowId, tenantId, nodeId, reason, requestedAt],
          );
        }
        const { rows } = await tx.query<WorkflowRow>(
          `SELECT ${WORKFLOW_READ_COLUMNS} FROM workflows WHERE id = $1 AND tenant_id = $2`,
          [workflowId, tenantId],
        );
        return { reopened, row: rows[0] };
      });
      return row && { reopened, workflow: await toRecord(row) };
    },

    async reflectionRequest(workflowId) {
      const { rows } = await pool.query<{
        id: string;
        workflow_id: string;
        node_id: string;
        reason: string | null;
        requested_at: number;
      }>(
        `SELECT id, workflow_id, node_id, reason, requested_at FROM reflection_requests
          WHERE workflow_id = $1 ORDER BY requested_at DESC, id DESC LIMIT 1`,
        [workflowId],
      );
      const row = rows[0];
      return (
        row && {
          id: row.id,
          workflowId: row.workflow_id,
          nodeId: row.node_id,
          reason: row.reason,
          requestedAt: row.requested_at,
        }
      );
    },

    async reflectionRequestCounts(workflowId) {
      const { rows } = await pool.query<{ node_id: string; requests: number }>(
        'SELECT node_id, count(*) AS requests FROM reflection_requests WHERE workflow_id = $1 GROUP BY node_id',
        [workflowId],
      );
      return new Map(rows.map((row) => [row.node_id, row.requests]));
    },

    async resumable() {
      const { rows } = await pool.query<{ id: string; tenantId: string }>(
        `SELECT id, tenant_id AS "tenantId" FROM workflows
          WHERE status IN ('idle', 'running') AND parent_workflow_id IS NULL ORDER BY id`,
      );
      return rows;
    },

    async pruneIdempotencyKeys(before) {
      const result = await pool.query('DELETE FROM idempotency_keys WHERE created_at < $1', [before]);
      return result.rowCount ?? 0;
    },

    async treeCounts(workflowId, rootWorkflowId) {
      const { rows } = await pool.query<{ children: number; descendants: number }>(
        `SELECT (SELECT count(*) FROM workflows WHERE parent_workflow_id = $1) AS children,
                (SELECT count(*) FROM workflows WHERE root_workflow_id = $2 AND parent_workflow_id IS NOT NULL) AS descendants`,
        [workflowId, rootWorkflowId],
      );
      return rows[0] ?? { children: 0, descendants: 0 };
    },

    unfinishedChildren: (parentWorkflowId) =>
      selectWorkflows("parent_workflow_id = $1 AND status IN ('idle', 'running')", [parentWorkflowId]),

    children: (parentWorkflowId) => selectWorkflows('parent_workflow_id = $1', [parentWorkflowId]),

    async reflections(workflowId) {
      const { rows } = await pool.query<ReflectionRow>(
        `SELECT ${REFLECTION_COLUMNS} FROM reflections WHERE workflow_id = $1 ORDER BY id`,
        [workflowId],
      );
      return rows.map(toReflectionEntry);
    },
  };
}
