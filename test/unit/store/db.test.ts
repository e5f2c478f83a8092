import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/store/sqlite/db.js';
import { tempDir } from '../../support/store-fixtures.js';

/** The newest migration's version: what user_version reads once every migration has run. */
const NEWEST_MIGRATION = Math.max(
  ...readdirSync(new URL('../../../migrations/sqlite/', import.meta.url))
    .filter((f) => /^\d{4}_.+\.sql$/.test(f))
    .map((f) => Number(f.slice(0, 4))),
);

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function tempPath(...segments: string[]): string {
  const temp = tempDir();
  cleanups.push(temp.remove);
  return join(temp.dir, ...segments);
}

function tableNames(db: Database.Database): string[] {
  return db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all() as string[];
}

describe('openDatabase', () => {
  it('applies every migration to a new in-memory database', () => {
    const db = openDatabase(':memory:', { synchronous: 'NORMAL' });
    expect(db.pragma('user_version', { simple: true })).toBe(NEWEST_MIGRATION);
    expect(tableNames(db)).toEqual(
      expect.arrayContaining(['api_keys', 'idempotency_keys', 'journal', 'nodes', 'workflows']),
    );
    // Events and spans live in the journal; the old table names are views of it. The usage roll-ups
    // take their rows through three empty views with INSTEAD OF triggers (migrations/sqlite/0022).
    const views = db.prepare("SELECT name FROM sqlite_master WHERE type = 'view' ORDER BY name").pluck().all();
    expect(views).toEqual(['events', 'spans', 'usage_efficiency_input', 'usage_journal_input', 'usage_reward_input']);
    db.close();
  });

  it('creates the parent directory and applies migrations only once across reopens', () => {
    const path = tempPath('nested', 'deeper', 'baton.db');
    const first = openDatabase(path, { synchronous: 'NORMAL' });
    first.prepare("INSERT INTO api_keys (key_hash, tenant_id, created_at) VALUES ('h', 't', 1)").run();
    first.close();

    // Re-running 0001 would fail on CREATE TABLE, and would not keep the row.
    const second = openDatabase(path, { synchronous: 'NORMAL' });
    expect(second.pragma('user_version', { simple: true })).toBe(NEWEST_MIGRATION);
    expect(second.prepare('SELECT count(*) FROM api_keys').pluck().get()).toBe(1);
    second.close();
  });

  it('sets WAL, synchronous=NORMAL, foreign keys and a short busy timeout on a file', () => {
    const db = openDatabase(tempPath('baton.db'), { synchronous: 'NORMAL' });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(1);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(100);
    db.close();
  });

  it('honours synchronous=FULL', () => {
    const db = openDatabase(tempPath('baton.db'), { synchronous: 'FULL' });
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    db.close();
  });

  it('enforces foreign keys', () => {
    const db = openDatabase(':memory:', { synchronous: 'NORMAL' });
    const orphan = db.prepare(
      `INSERT INTO nodes (id, workflow_id, tenant_id, name, type, position, depth, status)
       VALUES ('nd_1', 'wf_missing', 't', 'n', 'prompt', 0, 0, 'idle')`,
    );
    expect(() => orphan.run()).toThrow(/FOREIGN KEY/);
    db.close();
  });

  it('refuses a database whose schema is newer than the migrations folder', () => {
    const path = tempPath('baton.db');
    openDatabase(path, { synchronous: 'NORMAL' }).close();
    const raw = new Database(path);
    raw.pragma(`user_version = ${NEWEST_MIGRATION + 1}`);
    raw.close();

    expect(() => openDatabase(path, { synchronous: 'NORMAL' })).toThrow(/newer than this build/);
  });
});
