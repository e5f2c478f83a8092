import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import type { WorkflowDefinition } from '../../src/domain/definition.js';
import { newId, newTraceId } from '../../src/domain/ids.js';
import type { NewWorkflow } from '../../src/domain/ports.js';
import type { NodeRecord, WorkflowRecord } from '../../src/domain/records.js';
import type { Status } from '../../src/domain/status.js';
import { type Db, openDatabase } from '../../src/store/sqlite/db.js';
import { createGroupCommitter, type GroupCommitter } from '../../src/store/sqlite/group-commit.js';
import { createSqliteWorkflowStore } from '../../src/store/sqlite/workflows.repo.js';

export interface StoreFixture {
  db: Db;
  committer: GroupCommitter;
  store: ReturnType<typeof createSqliteWorkflowStore>;
}

export function openMemoryStore(): StoreFixture {
  const db = openDatabase(':memory:', { synchronous: 'NORMAL' });
  const committer = createGroupCommitter(db);
  return { db, committer, store: createSqliteWorkflowStore(db, committer) };
}

/** A fresh directory under the OS temp dir and a function that removes it. */
export function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'baton-store-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export function definition(name = 'review-pr'): WorkflowDefinition {
  return {
    name,
    input: { pr: 42 },
    agents: { writer: { model: 'sim/sonnet' } },
    root: {
      type: 'sequence',
      name: 'main',
      steps: [{ type: 'prompt', name: 'draft', agent: 'writer', user: 'Summarise {{input.pr}}' }],
    },
  };
}

export interface WorkflowOptions {
  tenantId?: string;
  name?: string;
  status?: Status;
  correlationId?: string | null;
  parent?: WorkflowRecord;
  parentNodeId?: string;
}

/** A workflow with two node rows (the root sequence and its prompt step). */
export function newWorkflow(options: WorkflowOptions = {}): NewWorkflow {
  const id = newId('wf');
  const parent = options.parent;
  const name = options.name ?? 'review-pr';
  const workflow: WorkflowRecord = {
    id,
    tenantId: options.tenantId ?? parent?.tenantId ?? 'tenant-a',
    name,
    status: options.status ?? 'idle',
    correlationId: options.correlationId ?? null,
    parentWorkflowId: parent?.id ?? null,
    parentNodeId: parent === undefined ? null : (options.parentNodeId ?? null),
    rootWorkflowId: parent?.rootWorkflowId ?? id,
    depth: parent === undefined ? 0 : parent.depth + 1,
    traceId: parent?.traceId ?? newTraceId(),
    definition: definition(name),
    output: null,
    error: null,
    cancelRequested: false,
    checkpoint: null,
    routing: null,
    createdAt: 1_700_000_000_000,
    startedAt: null,
    endedAt: null,
  };
  const root = node(id, { name: 'main', type: 'sequence' });
  const step = node(id, { name: 'draft', type: 'prompt', parentId: root.id, depth: 1 });
  return { workflow, nodes: [root, step] };
}

export function node(workflowId: string, fields: Partial<NodeRecord> & Pick<NodeRecord, 'name' | 'type'>): NodeRecord {
  return {
    id: newId('nd'),
    workflowId,
    parentId: null,
    position: 0,
    depth: 0,
    status: 'idle',
    attempts: 0,
    output: null,
    error: null,
    childWorkflowId: null,
    cacheKeys: [],
    startedAt: null,
    endedAt: null,
    ...fields,
  };
}

const MIGRATIONS = fileURLToPath(new URL('../../migrations/sqlite/', import.meta.url));

/**
 * A database as an older build left it: every migration up to `version` applied, as that build
 * did, and nothing after; a migration test then opens it with today's openDatabase.
 */
export function databaseAtSchema(
  path: string,
  version: number,
  options: { foreignKeys?: boolean } = {},
): Database.Database {
  const db = new Database(path);
  if (options.foreignKeys) db.pragma('foreign_keys = ON');
  for (const file of readdirSync(MIGRATIONS).sort()) {
    if (Number(file.slice(0, 4)) > version) continue;
    db.exec(readFileSync(join(MIGRATIONS, file), 'utf8'));
  }
  db.pragma(`user_version = ${version}`);
  return db;
}
