import { LRUCache } from 'lru-cache';
import type { WorkflowDefinition } from '../../domain/definition.js';
import { NotFoundError, ValidationError } from '../../domain/errors.js';
import type {
  ChangeSet,
  CreateResult,
  IdempotencyClaim,
  NewWorkflow,
  Page,
  WorkflowFilter,
  WorkflowStore,
} from '../../domain/ports.js';
import type { WorkflowRecord } from '../../domain/records.js';
import { decodeKeyset, encodeKeyset } from '../keyset.js';
import {
  type IdempotencyRow,
  NODE_COLUMNS,
  NODE_PATCH_FIELDS,
  type NodeRow,
  nodeValues,
  type PatchField,
  parseDefinition,
  toNode,
  toWorkflow,
  WORKFLOW_COLUMNS,
  WORKFLOW_PATCH_FIELDS,
  WORKFLOW_READ_COLUMNS,
  type WorkflowRow,
  workflowValues,
} from '../workflow-rows.js';
import { createAgentUseRows } from './agents.repo.js';
import { createBudgetRows } from './budget.repo.js';
import { createCheckpointDecider } from './checkpoint-decision.js';
import type { Db } from './db.js';
import type { GroupCommitter } from './group-commit.js';
import { createJournalRepo } from './journal.repo.js';
import { createMetricsRows } from './metrics.repo.js';
import { createReflectionRequestRows } from './reflection-requests.js';
import { createReflectionsRepo } from './reflections.repo.js';
import { createToolAnalyticsRows } from './tool-analytics.repo.js';

/**
 * Updates only the fields a patch sets. One prepared statement per distinct field set, keyed by a
 * bitmask of the fields present, so the hot path neither builds SQL nor re-prepares.
 */
function createPatcher<P extends { id: string }>(
  db: Db,
  table: 'workflows' | 'nodes',
  fields: ReadonlyArray<PatchField<P>>,
): (patch: P) => void {
  const statements = new Map<number, ReturnType<Db['prepare']>>();
  return (patch) => {
    let mask = 0;
    let bit = 1;
    const params: unknown[] = [];
    for (const field of fields) {
      const value = patch[field.key];
      if (value !== undefined) {
        mask |= bit;
        params.push((field.encode as (value: unknown) => unknown)(value));
      }
      bit <<= 1;
    }
    if (mask === 0) return;
    params.push(patch.id);

    let statement = statements.get(mask);
    if (statement === undefined) {
      const assignments = fields.filter((_, i) => (mask & (1 << i)) !== 0).map((field) => `${field.column} = ?`);
      statement = db.prepare(`UPDATE ${table} SET ${assignments.join(', ')} WHERE id = ?`);
      statements.set(mask, statement);
    }
    // A patch for a row that does not exist is an engine bug: fail the change set, not silently skip.
    if (statement.run(params).changes === 0) {
      throw new NotFoundError(`${table === 'nodes' ? 'node' : 'workflow'} ${patch.id}`);
    }
  };
}

type CreateOutcome = Exclude<CreateResult, { kind: 'replayed' }> | { kind: 'replayed'; row: WorkflowRow };

const LIST_FILTERS = [
  ['status', 'status = ?'],
  ['name', 'name = ?'],
  ['correlationId', 'correlation_id = ?'],
  ['parentWorkflowId', 'parent_workflow_id = ?'],
] as const;
const CURSOR_BIT = 1 << LIST_FILTERS.length;
/**
 * Parsed definitions kept in memory: those of running and recently read workflows, not of every
 * workflow ever stored. Bounded by entries, and by their JSON text (a parsed definition takes
 * several times its text in heap, so 8 MiB of text is some tens of MiB at worst).
 */
export const DEFINITION_CACHE_ENTRIES = 1000;
const DEFINITION_CACHE_BYTES = 8 * 1024 * 1024;

export function createSqliteWorkflowStore(db: Db, committer: GroupCommitter): WorkflowStore {
  const journal = createJournalRepo(db);
  const insertWorkflow = db.prepare(
    `INSERT INTO workflows (${WORKFLOW_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertNode = db.prepare(
    `INSERT INTO nodes (${NODE_COLUMNS}, tenant_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const selectIdempotencyKey = db.prepare<[string, string], IdempotencyRow>(
    'SELECT body_hash, workflow_id, created_at FROM idempotency_keys WHERE tenant_id = ? AND key = ?',
  );
  const upsertIdempotencyKey = db.prepare(
    `INSERT INTO idempotency_keys (tenant_id, key, body_hash, workflow_id, created_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (tenant_id, key) DO UPDATE
     SET body_hash = excluded.body_hash, workflow_id = excluded.workflow_id, created_at = excluded.created_at`,
  );
  const selectById = db.prepare<[string], WorkflowRow>(`SELECT ${WORKFLOW_READ_COLUMNS} FROM workflows WHERE id = ?`);
  const selectForTenant = db.prepare<[string, string], WorkflowRow>(
    `SELECT ${WORKFLOW_READ_COLUMNS} FROM workflows WHERE id = ? AND tenant_id = ?`,
  );
  const selectNodes = db.prepare<[string], NodeRow>(
    `SELECT ${NODE_COLUMNS} FROM nodes WHERE workflow_id = ? ORDER BY id`,
  );
  const flagCancelTree = db
    .prepare<[string], string>(
      `WITH RECURSIVE tree (id) AS (
         SELECT id FROM workflows WHERE id = ?
         UNION SELECT w.id FROM workflows w JOIN tree ON w.parent_workflow_id = tree.id
       )
       UPDATE workflows SET cancel_requested = 1 WHERE id IN tree RETURNING id`,
    )
    .pluck();
  // Repeats the partial index's WHERE clause verbatim so the planner uses workflows_resumable.
  const selectResumable = db.prepare<[], { id: string; tenantId: string }>(
    `SELECT id, tenant_id AS tenantId FROM workflows WHERE status IN ('idle', 'running') AND parent_workflow_id IS NULL ORDER BY id`,
  );
  const deleteIdempotencyKeys = db.prepare<[number]>('DELETE FROM idempotency_keys WHERE created_at < ?');
  const listStatements = new Map<number, ReturnType<Db['prepare']>>();

  const patchWorkflow = createPatcher(db, 'workflows', WORKFLOW_PATCH_FIELDS);
  const decideCheckpoint = createCheckpointDecider(db);
  const reflectionRequests = createReflectionRequestRows(db);
  const patchNode = createPatcher(db, 'nodes', NODE_PATCH_FIELDS);
  const reflectionRows = createReflectionsRepo(db);
  const metricsRows = createMetricsRows(db);
  const agentUseRows = createAgentUseRows(db);
  const toolAnalyticsRows = createToolAnalyticsRows(db);
  const budgetRows = createBudgetRows(db);
  const selectTreeCounts = db.prepare<[string, string], { children: number; descendants: number }>(
    `SELECT (SELECT count(*) FROM workflows WHERE parent_workflow_id = ?) AS children,
            (SELECT count(*) FROM workflows WHERE root_workflow_id = ? AND parent_workflow_id IS NOT NULL) AS descendants`,
  );
  const selectUnfinishedChildren = db.prepare<[string], WorkflowRow>(
    `SELECT ${WORKFLOW_READ_COLUMNS} FROM workflows
     WHERE parent_workflow_id = ? AND status IN ('idle', 'running') ORDER BY id`,
  );

  const selectChildren = db.prepare<[string], WorkflowRow>(
    `SELECT ${WORKFLOW_READ_COLUMNS} FROM workflows WHERE parent_workflow_id = ? ORDER BY id`,
  );

  const selectDefinition = db.prepare<[string], string>('SELECT definition FROM workflows WHERE id = ?').pluck();
  // A workflow's definition never changes once stored: parsed once (or taken as submitted), then
  // served from here to every read, instead of JSON.parse + zod on each GET and resume.
  const definitions = new LRUCache<string, WorkflowDefinition>({
    max: DEFINITION_CACHE_ENTRIES,
    maxSize: DEFINITION_CACHE_BYTES,
  });
  const remember = (id: string, definition: WorkflowDefinition, bytes: number): WorkflowDefinition => {
    definitions.set(id, definition, { size: Math.max(1, bytes) });
    return definition;
  };
  const definitionOf = (id: string): WorkflowDefinition => {
    const cached = definitions.get(id);
    if (cached !== undefined) return cached;
    const text = selectDefinition.get(id);
    if (text === undefined) throw new NotFoundError(`workflow ${id}`);
    return remember(id, parseDefinition(text), text.length);
  };
  const toRecord = (row: WorkflowRow): WorkflowRecord => toWorkflow(row, definitionOf(row.id));

  function insertNewWorkflow({ workflow, nodes, agentUses }: NewWorkflow): void {
    const text = JSON.stringify(workflow.definition);
    insertWorkflow.run(workflowValues(workflow, text));
    remember(workflow.id, workflow.definition, text.length);
    for (const n of nodes) insertNode.run(nodeValues(n, workflow.tenantId));
    if (agentUses !== undefined && agentUses.length > 0) agentUseRows.insert(agentUses);
  }

  function applyChanges(changes: ChangeSet): void {
    if (changes.newWorkflows) for (const created of changes.newWorkflows) insertNewWorkflow(created);
    if (changes.workflows) for (const patch of changes.workflows) patchWorkflow(patch);
    if (changes.nodes) for (const patch of changes.nodes) patchNode(patch);
    // After the nodes: a new entry references its node row, which may be created in this same set.
    reflectionRows.apply(changes);
    // A workflow's efficiency record and reward commit with its final state
    // (docs/design.md#events-spans-metrics-and-rewards).
    metricsRows.apply(changes);
    // Events and spans: one journal row per workflow (journal.repo.ts).
    journal.apply(changes);
    toolAnalyticsRows.apply(changes);
    budgetRows.apply(changes);
  }

  function createInTransaction(created: NewWorkflow, claim: IdempotencyClaim | undefined): CreateOutcome {
    const { workflow } = created;
    if (claim !== undefined) {
      const existing = selectIdempotencyKey.get(workflow.tenantId, claim.key);
      if (existing !== undefined && existing.created_at >= claim.notBefore) {
        if (existing.body_hash !== claim.bodyHash) return { kind: 'conflict', workflowId: existing.workflow_id };
        const row = selectById.get(existing.workflow_id);
        // The foreign key guarantees the row; a miss means the database was edited by hand.
        if (row === undefined) throw new NotFoundError(`workflow ${existing.workflow_id}`);
        return { kind: 'replayed', row };
      }
    }
    insertNewWorkflow(created);
    if (claim !== undefined) {
      // Replaces an expired key in place.
      upsertIdempotencyKey.run(workflow.tenantId, claim.key, claim.bodyHash, workflow.id, workflow.createdAt);
    }
    return { kind: 'created', workflow };
  }

  function listStatement(filter: WorkflowFilter, hasCursor: boolean): ReturnType<Db['prepare']> {
    let mask = hasCursor ? CURSOR_BIT : 0;
    LIST_FILTERS.forEach(([key], i) => {
      if (filter[key] !== undefined) mask |= 1 << i;
    });
    let statement = listStatements.get(mask);
    if (statement === undefined) {
      const conditions = ['tenant_id = ?'];
      LIST_FILTERS.forEach(([, condition], i) => {
        if ((mask & (1 << i)) !== 0) conditions.push(condition);
      });
      if (hasCursor) conditions.push('id < ?');
      statement = db.prepare(
        `SELECT ${WORKFLOW_READ_COLUMNS} FROM workflows WHERE ${conditions.join(' AND ')} ORDER BY id DESC LIMIT ?`,
      );
      listStatements.set(mask, statement);
    }
    return statement;
  }

  return {
    async create(created, idempotency) {
      const outcome = await committer.run(() => createInTransaction(created, idempotency));
      // Mapped outside the transaction so parsing never lengthens the write lock.
      return outcome.kind === 'replayed' ? { kind: 'replayed', workflow: toRecord(outcome.row) } : outcome;
    },

    async commit(changes) {
      await committer.run(() => applyChanges(changes));
    },

    async get(tenantId, id) {
      const row = selectForTenant.get(id, tenantId);
      return row === undefined ? undefined : toRecord(row);
    },

    async getById(id) {
      const row = selectById.get(id);
      return row === undefined ? undefined : toRecord(row);
    },

    async list(tenantId, filter, cursor, limit): Promise<Page<WorkflowRecord>> {
      if (!Number.isInteger(limit) || limit < 1) {
        throw new ValidationError('Invalid limit', [{ path: 'limit', message: 'must be a positive integer' }]);
      }
      const params: unknown[] = [tenantId];
      for (const [key] of LIST_FILTERS) {
        const value = filter[key];
        if (value !== undefined) params.push(value);
      }
      if (cursor !== null) params.push(...decodeKeyset(cursor, ['string']));
      // One extra row tells whether another page exists without a count query.
      params.push(limit + 1);
      const rows = listStatement(filter, cursor !== null).all(params) as WorkflowRow[];
      const hasMore = rows.length > limit;
      const items = (hasMore ? rows.slice(0, limit) : rows).map(toRecord);
      const last = items.at(-1);
      return { items, nextCursor: hasMore && last !== undefined ? encodeKeyset([last.id]) : null };
    },

    async nodes(workflowId) {
      return selectNodes.all(workflowId).map(toNode);
    },

    async events(workflowId, after, limit) {
      return journal.events(workflowId, after, limit);
    },

    async lastSeq(workflowId) {
      return journal.lastSeq(workflowId);
    },

    async requestsSent(workflowId) {
      return journal.requestsSent(workflowId);
    },

    async requestsTaken(rootWorkflowId) {
      return budgetRows.requestsTaken(rootWorkflowId);
    },

    async tenantSpendUsd(tenantId, day) {
      return budgetRows.tenantSpendUsd(tenantId, day);
    },

    async requestCancel(id) {
      const ids = await committer.run(() => flagCancelTree.all(id));
      // Time-ordered ids: sorting puts the requested workflow before its descendants.
      return ids.sort();
    },

    async decideCheckpoint(tenantId, id, decision) {
      const { decided, row } = await committer.run(() => decideCheckpoint(tenantId, id, decision));
      return row && { decided, workflow: toRecord(row) };
    },

    async requestReflection(tenantId, request, maxPerNode) {
      const { reopened, row } = await committer.run(() => reflectionRequests.reopen(tenantId, request, maxPerNode));
      return row && { reopened, workflow: toRecord(row) };
    },

    async reflectionRequest(workflowId) {
      return reflectionRequests.newest(workflowId);
    },

    async reflectionRequestCounts(workflowId) {
      return reflectionRequests.counts(workflowId);
    },

    async resumable() {
      return selectResumable.all();
    },

    async treeCounts(workflowId, rootWorkflowId) {
      return selectTreeCounts.get(workflowId, rootWorkflowId) ?? { children: 0, descendants: 0 };
    },

    async unfinishedChildren(parentWorkflowId) {
      return selectUnfinishedChildren.all(parentWorkflowId).map(toRecord);
    },

    async children(parentWorkflowId) {
      return selectChildren.all(parentWorkflowId).map(toRecord);
    },

    async reflections(workflowId) {
      return reflectionRows.list(workflowId);
    },

    pruneIdempotencyKeys(before) {
      return committer.run(() => deleteIdempotencyKeys.run(before).changes);
    },
  };
}
