import type { ApiKeyStore } from '../../domain/ports.js';
import { keysByHash } from '../api-key-rows.js';
import type { Db } from './db.js';
import type { GroupCommitter } from './group-commit.js';

export function createSqliteApiKeyStore(db: Db, committer: GroupCommitter): ApiKeyStore {
  // Keys that survive a reconfiguration keep their created_at; the rest of the set is replaced.
  const upsert = db.prepare<[string, string, number]>(
    `INSERT INTO api_keys (key_hash, tenant_id, created_at) VALUES (?, ?, ?)
     ON CONFLICT (key_hash) DO UPDATE SET tenant_id = excluded.tenant_id`,
  );
  const deleteOthers = db.prepare<[string]>(
    'DELETE FROM api_keys WHERE key_hash NOT IN (SELECT value FROM json_each(?))',
  );

  return {
    async sync(keys) {
      const tenantByHash = keysByHash(keys);
      const now = Date.now();
      await committer.run(() => {
        deleteOthers.run(JSON.stringify([...tenantByHash.keys()]));
        for (const [keyHash, tenantId] of tenantByHash) upsert.run(keyHash, tenantId, now);
      });
    },
  };
}
