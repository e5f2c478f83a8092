import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/store/sqlite/db.js';
import { databaseAtSchema, tempDir } from '../../support/store-fixtures.js';

/**
 * Migration 0026 drops the CHECK that listed node kinds (a new kind needs no migration): the
 * rebuilt table keeps every node row and the rows that reference nodes, and still enforces its
 * foreign keys.
 */
const T0 = 1_700_000_000_000;

let dir: ReturnType<typeof tempDir>;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.remove());

const insertNode = (db: Database.Database, id: string, type: string) =>
  db
    .prepare(
      `INSERT INTO nodes (id, workflow_id, tenant_id, parent_id, name, type, position, depth, status)
       VALUES (?, 'wf_1', 'acme', NULL, ?, ?, 0, 0, 'failed')`,
    )
    .run(id, `n-${id}`, type);

describe('migration 0026 (node kinds unchecked)', () => {
  it('keeps nodes, reflections and reflection requests, and admits any kind', () => {
    const path = join(dir.dir, 'old.db');
    const old = databaseAtSchema(path, 25, { foreignKeys: true });
    old
      .prepare(
        `INSERT INTO workflows (id, tenant_id, name, status, root_workflow_id, trace_id, definition, created_at)
         VALUES ('wf_1', 'acme', 'w', 'failed', 'wf_1', 'trace_1', '{}', ?)`,
      )
      .run(T0);
    insertNode(old, 'nd_1', 'prompt');
    expect(() => insertNode(old, 'nd_x', 'novel')).toThrow(/CHECK/);
    old
      .prepare(
        `INSERT INTO reflections (id, workflow_id, tenant_id, node_id, node_name, attempt, timestamp, level, reason, error, resolution)
         VALUES ('rf_1', 'wf_1', 'acme', 'nd_1', 'n-nd_1', 1, ?, 'workflow', 'r', '{}', '{}')`,
      )
      .run(T0);
    old
      .prepare(
        `INSERT INTO reflection_requests (id, workflow_id, tenant_id, node_id, reason, requested_at)
         VALUES ('rr_1', 'wf_1', 'acme', 'nd_1', 'note', ?)`,
      )
      .run(T0);
    old.close();

    const db = openDatabase(path, { synchronous: 'NORMAL' });
    expect(db.prepare('SELECT id, type FROM nodes').all()).toEqual([{ id: 'nd_1', type: 'prompt' }]);
    expect(db.prepare('SELECT id, node_id FROM reflections').all()).toEqual([{ id: 'rf_1', node_id: 'nd_1' }]);
    expect(db.prepare('SELECT id, reason FROM reflection_requests').all()).toEqual([{ id: 'rr_1', reason: 'note' }]);
    insertNode(db, 'nd_2', 'novel');
    expect(() =>
      db
        .prepare(
          `INSERT INTO reflection_requests (id, workflow_id, tenant_id, node_id, reason, requested_at)
           VALUES ('rr_2', 'wf_1', 'acme', 'nd_nowhere', NULL, ?)`,
        )
        .run(T0),
    ).toThrow(/FOREIGN KEY/);
    db.close();
  });
});
