import type pg from 'pg';
import type { CacheEntry, CacheStore } from '../../domain/cache.js';
import {
  type EntryRow,
  INFO_COLUMNS,
  type InfoRow,
  parseCachedValue,
  prefixUpperBound,
  toInfo,
} from '../cache-rows.js';

/**
 * The persistent tier of the response cache on PostgreSQL (migrations/postgres/0011), one table
 * every instance shares below its own memory tier (docs/design.md#caching). Unlike the SQLite
 * tier, `save` is insert-if-absent: the first answer stored for a key stays, and instances that
 * computed it too (identical misses are collapsed per instance only) leave it, its hits and its
 * expiry alone. An expired row counts as absent and is replaced. PostgreSQL text holds no U+0000:
 * a key or prefix with one matches nothing.
 */

const NUL = '\u0000';

export function createPostgresCacheStore(pool: pg.Pool): CacheStore {
  return {
    async load(tenantId, key, now) {
      if (key.includes(NUL)) return undefined;
      const { rows } = await pool.query<EntryRow>(
        `SELECT ${INFO_COLUMNS}, value FROM cache_entries WHERE tenant_id = $1 AND key = $2 AND expires_at >= $3`,
        [tenantId, key, now],
      );
      const row = rows[0];
      if (row === undefined) return undefined;
      const value = parseCachedValue(row.value);
      return value === undefined ? undefined : { ...toInfo(row), value };
    },

    async save(entry: CacheEntry) {
      if (entry.key.includes(NUL)) return;
      await pool.query(
        `INSERT INTO cache_entries (tenant_id, key, namespace, value, size_bytes, model_id, tokens_in, tokens_out,
           created_at, expires_at, hits, last_hit_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
         ON CONFLICT (tenant_id, key) DO UPDATE SET
           namespace = excluded.namespace, value = excluded.value, size_bytes = excluded.size_bytes,
           model_id = excluded.model_id, tokens_in = excluded.tokens_in, tokens_out = excluded.tokens_out,
           created_at = excluded.created_at, expires_at = excluded.expires_at, hits = excluded.hits,
           last_hit_at = excluded.last_hit_at
         WHERE cache_entries.expires_at < excluded.created_at`,
        [
          entry.tenantId,
          entry.key,
          entry.namespace,
          JSON.stringify(entry.value),
          entry.sizeBytes,
          entry.modelId,
          entry.tokens.input,
          entry.tokens.output,
          entry.createdAt,
          entry.expiresAt,
          entry.hits,
          entry.lastHitAt,
        ],
      );
    },

    async delete(tenantId, key) {
      if (key.includes(NUL)) return false;
      const result = await pool.query('DELETE FROM cache_entries WHERE tenant_id = $1 AND key = $2', [tenantId, key]);
      return (result.rowCount ?? 0) > 0;
    },

    async deletePrefix(tenantId, prefix) {
      if (prefix.includes(NUL)) return [];
      // Ranges on the primary key, not LIKE: `_` and `%` in a prefix are literal characters.
      const upper = prefixUpperBound(prefix);
      const { rows } =
        upper === undefined
          ? await pool.query<{ key: string }>(
              'DELETE FROM cache_entries WHERE tenant_id = $1 AND key >= $2 RETURNING key',
              [tenantId, prefix],
            )
          : await pool.query<{ key: string }>(
              'DELETE FROM cache_entries WHERE tenant_id = $1 AND key >= $2 AND key < $3 RETURNING key',
              [tenantId, prefix, upper],
            );
      return rows.map((row) => row.key);
    },

    async recordHit(tenantId, key, at, expiresAt) {
      if (key.includes(NUL)) return;
      await pool.query(
        `UPDATE cache_entries SET hits = hits + 1, last_hit_at = $1, expires_at = greatest(expires_at, $2)
         WHERE tenant_id = $3 AND key = $4`,
        [at, expiresAt, tenantId, key],
      );
    },

    async info(tenantId, key, now) {
      if (key.includes(NUL)) return undefined;
      const { rows } = await pool.query<InfoRow>(
        `SELECT ${INFO_COLUMNS} FROM cache_entries WHERE tenant_id = $1 AND key = $2 AND expires_at >= $3`,
        [tenantId, key, now],
      );
      const row = rows[0];
      return row === undefined ? undefined : toInfo(row);
    },

    async list(tenantId, prefix, limit, now) {
      if (prefix.includes(NUL)) return [];
      const upper = prefixUpperBound(prefix);
      const { rows } =
        upper === undefined
          ? await pool.query<InfoRow>(
              `SELECT ${INFO_COLUMNS} FROM cache_entries
               WHERE tenant_id = $1 AND key >= $2 AND expires_at >= $3 ORDER BY key LIMIT $4`,
              [tenantId, prefix, now, limit],
            )
          : await pool.query<InfoRow>(
              `SELECT ${INFO_COLUMNS} FROM cache_entries
               WHERE tenant_id = $1 AND key >= $2 AND key < $3 AND expires_at >= $4 ORDER BY key LIMIT $5`,
              [tenantId, prefix, upper, now, limit],
            );
      return rows.map(toInfo);
    },

    async purgeExpired(now, limit) {
      const result = await pool.query(
        `DELETE FROM cache_entries WHERE (tenant_id, key) IN (
           SELECT tenant_id, key FROM cache_entries WHERE expires_at < $1 ORDER BY expires_at LIMIT $2
           FOR UPDATE SKIP LOCKED)`,
        [now, limit],
      );
      return result.rowCount ?? 0;
    },
  };
}
