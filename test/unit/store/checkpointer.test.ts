import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCheckpointer } from '../../../src/store/checkpointer.js';
import { openDatabase } from '../../../src/store/db.js';

describe('background WAL checkpointer', () => {
  it('copies committed WAL frames into the database file off the main thread', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'baton-ckpt-')), 'baton.db');
    const db = openDatabase(path, { synchronous: 'NORMAL' });
    const errors: string[] = [];
    const checkpointer = startCheckpointer(db, { path, intervalMs: 20, onError: (m) => errors.push(m) });
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    const before = statSync(path).size;
    db.exec('CREATE TABLE filler (id INTEGER PRIMARY KEY, blob TEXT)');
    const insert = db.prepare('INSERT INTO filler (blob) VALUES (?)');
    db.transaction(() => {
      for (let i = 0; i < 500; i++) insert.run('x'.repeat(1000));
    })();
    const deadline = Date.now() + 5000;
    while (statSync(path).size <= before + 400_000 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(statSync(path).size).toBeGreaterThan(before + 400_000);
    await checkpointer.stop();
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    db.close();
    expect(errors).toEqual([]);
  });
});
