import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../src/domain/errors.js';
import { createSqliteApiKeyStore } from '../../../src/store/api-keys.repo.js';
import { openDatabase } from '../../../src/store/db.js';
import { createGroupCommitter } from '../../../src/store/group-commit.js';

function openKeyStore() {
  const db = openDatabase(':memory:', { synchronous: 'NORMAL' });
  return { db, keys: createSqliteApiKeyStore(db, createGroupCommitter(db)) };
}

describe('createSqliteApiKeyStore', () => {
  it('stores the configured key hashes', async () => {
    const { keys } = openKeyStore();
    await keys.sync([
      { tenantId: 'globex', keyHash: 'h-3' },
      { tenantId: 'acme', keyHash: 'h-1' },
      { tenantId: 'acme', keyHash: 'h-2' },
    ]);
    expect(await keys.all()).toEqual([
      { tenantId: 'acme', keyHash: 'h-1' },
      { tenantId: 'acme', keyHash: 'h-2' },
      { tenantId: 'globex', keyHash: 'h-3' },
    ]);
  });

  it('replaces the whole set and keeps created_at of keys that stay', async () => {
    const { db, keys } = openKeyStore();
    await keys.sync([
      { tenantId: 'acme', keyHash: 'kept' },
      { tenantId: 'acme', keyHash: 'revoked' },
    ]);
    db.prepare("UPDATE api_keys SET created_at = 1 WHERE key_hash = 'kept'").run();

    await keys.sync([
      { tenantId: 'acme', keyHash: 'kept' },
      { tenantId: 'globex', keyHash: 'new' },
    ]);

    expect(await keys.all()).toEqual([
      { tenantId: 'acme', keyHash: 'kept' },
      { tenantId: 'globex', keyHash: 'new' },
    ]);
    expect(db.prepare("SELECT created_at FROM api_keys WHERE key_hash = 'kept'").pluck().get()).toBe(1);
  });

  it('clears every key when synced with none', async () => {
    const { keys } = openKeyStore();
    await keys.sync([{ tenantId: 'acme', keyHash: 'h' }]);
    await keys.sync([]);
    expect(await keys.all()).toEqual([]);
  });

  it('refuses one key bound to two tenants', async () => {
    const { keys } = openKeyStore();
    const attempt = keys.sync([
      { tenantId: 'acme', keyHash: 'shared' },
      { tenantId: 'globex', keyHash: 'shared' },
    ]);
    await expect(attempt).rejects.toBeInstanceOf(ValidationError);
    expect(await keys.all()).toEqual([]);
  });
});
