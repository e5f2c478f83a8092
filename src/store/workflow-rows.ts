import { z } from 'zod';
import { AllocationSchema } from '../domain/allocation.js';
import type { NodeType } from '../domain/definition.js';
import { type WorkflowDefinition, WorkflowDefinitionSchema } from '../domain/definition.js';
import { type ErrorInfo, ErrorInfoSchema } from '../domain/errors.js';
import {
  CHECKPOINT_STATES,
  type NodePatch,
  type NodeRecord,
  type WorkflowPatch,
  type WorkflowRecord,
} from '../domain/records.js';
import type { Status } from '../domain/status.js';
import { COMPLEXITIES } from '../domain/task.js';

/** Row shapes of the workflow tables and their mapping to domain records, both directions. */

/** Every column but the definition: reads take it from a cache of parsed definitions (workflows.repo.ts). */
export const WORKFLOW_READ_COLUMNS =
  'id, tenant_id, name, status, correlation_id, parent_workflow_id, parent_node_id, root_workflow_id, depth, ' +
  'trace_id, output, error, cancel_requested, checkpoint, routing, created_at, started_at, ended_at';
export const WORKFLOW_COLUMNS = `${WORKFLOW_READ_COLUMNS}, definition`;
export const NODE_COLUMNS =
  'id, workflow_id, parent_id, name, type, position, depth, status, attempts, output, error, child_workflow_id, ' +
  'started_at, ended_at, cache_keys';

export interface WorkflowRow {
  id: string;
  tenant_id: string;
  name: string;
  status: Status;
  correlation_id: string | null;
  parent_workflow_id: string | null;
  parent_node_id: string | null;
  root_workflow_id: string;
  depth: number;
  trace_id: string;
  output: string | null;
  error: string | null;
  cancel_requested: number;
  checkpoint: string | null;
  routing: string | null;
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
}

export interface NodeRow {
  id: string;
  workflow_id: string;
  parent_id: string | null;
  name: string;
  type: NodeType;
  position: number;
  depth: number;
  status: Status;
  attempts: number;
  output: string | null;
  error: string | null;
  child_workflow_id: string | null;
  started_at: number | null;
  ended_at: number | null;
  cache_keys: string | null;
}

export interface IdempotencyRow {
  body_hash: string;
  workflow_id: string;
  created_at: number;
}

/** JSON columns store SQL NULL for an absent or null value; anything else is one JSON.stringify. */
export function toJson(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

function parseOutput(text: string | null): unknown {
  return text === null ? null : JSON.parse(text);
}

function parseError(text: string | null): ErrorInfo | null {
  return text === null ? null : ErrorInfoSchema.parse(JSON.parse(text));
}

/** A stored definition goes back through zod: a hand-edited or corrupt row fails loudly, not downstream. */
export function parseDefinition(text: string): WorkflowDefinition {
  return WorkflowDefinitionSchema.parse(JSON.parse(text));
}

export function toWorkflow(row: WorkflowRow, definition: WorkflowDefinition): WorkflowRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    status: row.status,
    correlationId: row.correlation_id,
    parentWorkflowId: row.parent_workflow_id,
    parentNodeId: row.parent_node_id,
    rootWorkflowId: row.root_workflow_id,
    depth: row.depth,
    traceId: row.trace_id,
    definition,
    output: parseOutput(row.output),
    error: parseError(row.error),
    cancelRequested: row.cancel_requested === 1,
    checkpoint: row.checkpoint === null ? null : CheckpointSchema.parse(JSON.parse(row.checkpoint)),
    routing: row.routing === null ? null : RoutingSchema.parse(JSON.parse(row.routing)),
    createdAt: row.created_at,
    startedAt: row.started_at,
    endedAt: row.ended_at,
  };
}

const CacheKeysSchema = z.array(z.string());
// Stored rows are read strictly: a stray key or an allocation of no agents is a corrupt row.
const RoutingSchema = z.strictObject({
  complexity: z.enum(COMPLEXITIES),
  allocation: z.strictObject({ ...AllocationSchema.shape, max_agents: z.int().min(1) }).nullable(),
});
const CheckpointSchema = z.strictObject({
  state: z.enum(CHECKPOINT_STATES),
  reason: z.string().nullable(),
  at: z.number().nullable(),
});

export function toNode(row: NodeRow): NodeRecord {
  return {
    id: row.id,
    workflowId: row.workflow_id,
    parentId: row.parent_id,
    name: row.name,
    type: row.type,
    position: row.position,
    depth: row.depth,
    status: row.status,
    attempts: row.attempts,
    output: parseOutput(row.output),
    error: parseError(row.error),
    childWorkflowId: row.child_workflow_id,
    cacheKeys: row.cache_keys === null ? [] : CacheKeysSchema.parse(JSON.parse(row.cache_keys)),
    startedAt: row.started_at,
    endedAt: row.ended_at,
  };
}

/** Bind values for `INSERT INTO workflows (WORKFLOW_COLUMNS)`, in column order. */
export function workflowValues(w: WorkflowRecord, definitionText: string): unknown[] {
  return [
    w.id,
    w.tenantId,
    w.name,
    w.status,
    w.correlationId ?? null,
    w.parentWorkflowId ?? null,
    w.parentNodeId ?? null,
    w.rootWorkflowId,
    w.depth,
    w.traceId,
    toJson(w.output),
    toJson(w.error),
    w.cancelRequested ? 1 : 0,
    toJson(w.checkpoint),
    toJson(w.routing),
    w.createdAt,
    w.startedAt ?? null,
    w.endedAt ?? null,
    definitionText,
  ];
}

/** Bind values for `INSERT INTO nodes (NODE_COLUMNS, tenant_id)`: node rows carry their workflow's tenant. */
export function nodeValues(n: NodeRecord, tenantId: string): unknown[] {
  return [
    n.id,
    n.workflowId,
    n.parentId ?? null,
    n.name,
    n.type,
    n.position,
    n.depth,
    n.status,
    n.attempts,
    toJson(n.output),
    toJson(n.error),
    n.childWorkflowId ?? null,
    n.startedAt ?? null,
    n.endedAt ?? null,
    n.cacheKeys.length === 0 ? null : JSON.stringify(n.cacheKeys),
    tenantId,
  ];
}

/** A field a patch may set, its column, and how its value is stored (both stores patch by these). */
export interface PatchField<P> {
  key: Exclude<keyof P, 'id'>;
  column: string;
  encode: (value: never) => unknown;
}

const asIs = (value: unknown): unknown => value;
const asFlag = (value: boolean): number => (value ? 1 : 0);

/** In this order: bit i of a PostgreSQL patch row's mask is field i (migrations/postgres/0022). */
export const WORKFLOW_PATCH_FIELDS: ReadonlyArray<PatchField<WorkflowPatch>> = [
  { key: 'status', column: 'status', encode: asIs },
  { key: 'output', column: 'output', encode: toJson },
  { key: 'error', column: 'error', encode: toJson },
  { key: 'startedAt', column: 'started_at', encode: asIs },
  { key: 'endedAt', column: 'ended_at', encode: asIs },
  { key: 'cancelRequested', column: 'cancel_requested', encode: asFlag },
  { key: 'checkpoint', column: 'checkpoint', encode: toJson },
];

/** In this order: bit i of a PostgreSQL patch row's mask is field i (migrations/postgres/0022). */
export const NODE_PATCH_FIELDS: ReadonlyArray<PatchField<NodePatch>> = [
  { key: 'status', column: 'status', encode: asIs },
  { key: 'attempts', column: 'attempts', encode: asIs },
  { key: 'output', column: 'output', encode: toJson },
  { key: 'error', column: 'error', encode: toJson },
  { key: 'startedAt', column: 'started_at', encode: asIs },
  { key: 'endedAt', column: 'ended_at', encode: asIs },
  { key: 'childWorkflowId', column: 'child_workflow_id', encode: asIs },
  { key: 'cacheKeys', column: 'cache_keys', encode: toJson },
];
