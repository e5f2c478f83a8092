import type pg from 'pg';
import type { ApiKeyStore } from '../../domain/ports.js';
import { keysByHash } from '../api-key-rows.js';
import { inTransaction } from './transaction.js';

/**
 * The configured API keys on PostgreSQL (migrations/postgres/0011), hashes only. Each instance syncs
 * them at boot, in one transaction under a transaction-level advisory lock: instances booting at
 * once sync one after the other, so none loses a key to another's delete or fails on another's
 * insert, and the set is whole after each. Instances booted with different sets (a rolling change
 * of API_KEYS) leave the set of the last one to boot.
 */

/** pg_advisory_xact_lock key: "baton" + "key" as bytes. */
const SYNC_LOCK = '7089054092727067001';

export function createPostgresApiKeyStore(pool: pg.Pool): ApiKeyStore {
  return {
    async sync(keys) {
      const tenantByHash = keysByHash(keys);
      const hashes = [...tenantByHash.keys()];
      const now = Date.now();
      await inTransaction(pool, async (client) => {
        await client.query('SELECT pg_advisory_xact_lock($1)', [SYNC_LOCK]);
        await client.query('DELETE FROM api_keys WHERE NOT (key_hash = ANY($1::text[]))', [hashes]);
        // Keys that survive a reconfiguration keep their created_at.
        await client.query(
          `INSERT INTO api_keys (key_hash, tenant_id, created_at)
           SELECT u.key_hash, u.tenant_id, $3 FROM unnest($1::text[], $2::text[]) AS u(key_hash, tenant_id)
           ON CONFLICT (key_hash) DO UPDATE SET tenant_id = excluded.tenant_id`,
          [hashes, hashes.map((hash) => tenantByHash.get(hash)), now],
        );
      });
    },
  };
}
