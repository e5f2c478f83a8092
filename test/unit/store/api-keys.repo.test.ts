import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../src/domain/errors.js';
import { createSqliteApiKeyStore } from '../../../src/store/sqlite/api-keys.repo.js';
import { openDatabase } from '../../../src/store/sqlite/db.js';
import { createGroupCommitter } from '../../../src/store/sqlite/group-commit.js';

function openKeyStore() {
  const db = openDatabase(':memory:', { synchronous: 'NORMAL' });
  // The store only writes (auth compares against the configured keys); the table is read here.
  const stored = () =>
    db.prepare('SELECT tenant_id AS tenantId, key_hash AS keyHash FROM api_keys ORDER BY tenant_id, key_hash').all();
  return { db, keys: createSqliteApiKeyStore(db, createGroupCommitter(db)), stored };
}

describe('createSqliteApiKeyStore', () => {
  it('stores the configured key hashes', async () => {
    const { keys, stored } = openKeyStore();
    await keys.sync([
      { tenantId: 'globex', keyHash: 'h-3' },
      { tenantId: 'acme', keyHash: 'h-1' },
      { tenantId: 'acme', keyHash: 'h-2' },
    ]);
    expect(stored()).toEqual([
      { tenantId: 'acme', keyHash: 'h-1' },
      { tenantId: 'acme', keyHash: 'h-2' },
      { tenantId: 'globex', keyHash: 'h-3' },
    ]);
  });

  it('replaces the whole set and keeps created_at of keys that stay', async () => {
    const { db, keys, stored } = openKeyStore();
    await keys.sync([
      { tenantId: 'acme', keyHash: 'kept' },
      { tenantId: 'acme', keyHash: 'revoked' },
    ]);
    db.prepare("UPDATE api_keys SET created_at = 1 WHERE key_hash = 'kept'").run();

    await keys.sync([
      { tenantId: 'acme', keyHash: 'kept' },
      { tenantId: 'globex', keyHash: 'new' },
    ]);

    expect(stored()).toEqual([
      { tenantId: 'acme', keyHash: 'kept' },
      { tenantId: 'globex', keyHash: 'new' },
    ]);
    expect(db.prepare("SELECT created_at FROM api_keys WHERE key_hash = 'kept'").pluck().get()).toBe(1);
  });

  it('clears every key when synced with none', async () => {
    const { keys, stored } = openKeyStore();
    await keys.sync([{ tenantId: 'acme', keyHash: 'h' }]);
    await keys.sync([]);
    expect(stored()).toEqual([]);
  });

  it('refuses one key bound to two tenants', async () => {
    const { keys, stored } = openKeyStore();
    const attempt = keys.sync([
      { tenantId: 'acme', keyHash: 'shared' },
      { tenantId: 'globex', keyHash: 'shared' },
    ]);
    await expect(attempt).rejects.toBeInstanceOf(ValidationError);
    expect(stored()).toEqual([]);
  });
});
