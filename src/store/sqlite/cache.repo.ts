import type { CacheEntry, CacheStore } from '../../domain/cache.js';
import {
  type EntryRow,
  INFO_COLUMNS,
  type InfoRow,
  parseCachedValue,
  prefixUpperBound,
  toInfo,
} from '../cache-rows.js';
import type { Db } from './db.js';
import type { GroupCommitter } from './group-commit.js';

/** The persistent tier of the response cache (docs/design.md#caching): reads direct, writes group-committed. */

export function createSqliteCacheStore(db: Db, committer: GroupCommitter): CacheStore {
  const selectEntry = db.prepare<[string, string, number], EntryRow>(
    `SELECT ${INFO_COLUMNS}, value FROM cache_entries WHERE tenant_id = ? AND key = ? AND expires_at >= ?`,
  );
  const selectInfo = db.prepare<[string, string, number], InfoRow>(
    `SELECT ${INFO_COLUMNS} FROM cache_entries WHERE tenant_id = ? AND key = ? AND expires_at >= ?`,
  );
  const upsert = db.prepare(
    `INSERT INTO cache_entries (tenant_id, key, namespace, value, size_bytes, model_id, tokens_in, tokens_out,
       created_at, expires_at, hits, last_hit_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (tenant_id, key) DO UPDATE SET
       namespace = excluded.namespace, value = excluded.value, size_bytes = excluded.size_bytes,
       model_id = excluded.model_id, tokens_in = excluded.tokens_in, tokens_out = excluded.tokens_out,
       created_at = excluded.created_at, expires_at = excluded.expires_at, hits = excluded.hits,
       last_hit_at = excluded.last_hit_at`,
  );
  const deleteOne = db.prepare<[string, string]>('DELETE FROM cache_entries WHERE tenant_id = ? AND key = ?');
  // Ranges on the primary key, not LIKE: `_` and `%` in a prefix are literal characters.
  const deleteRange = db
    .prepare<[string, string, string], string>(
      'DELETE FROM cache_entries WHERE tenant_id = ? AND key >= ? AND key < ? RETURNING key',
    )
    .pluck();
  const deleteFrom = db
    .prepare<[string, string], string>('DELETE FROM cache_entries WHERE tenant_id = ? AND key >= ? RETURNING key')
    .pluck();
  const listRange = db.prepare<[string, string, string, number, number], InfoRow>(
    `SELECT ${INFO_COLUMNS} FROM cache_entries
     WHERE tenant_id = ? AND key >= ? AND key < ? AND expires_at >= ? ORDER BY key LIMIT ?`,
  );
  const listFrom = db.prepare<[string, string, number, number], InfoRow>(
    `SELECT ${INFO_COLUMNS} FROM cache_entries
     WHERE tenant_id = ? AND key >= ? AND expires_at >= ? ORDER BY key LIMIT ?`,
  );
  const hit = db.prepare<[number, number, string, string]>(
    `UPDATE cache_entries SET hits = hits + 1, last_hit_at = ?, expires_at = max(expires_at, ?)
     WHERE tenant_id = ? AND key = ?`,
  );
  const purge = db.prepare<[number, number]>(
    `DELETE FROM cache_entries WHERE (tenant_id, key) IN (
       SELECT tenant_id, key FROM cache_entries WHERE expires_at < ? ORDER BY expires_at LIMIT ?)`,
  );

  return {
    async load(tenantId, key, now) {
      const row = selectEntry.get(tenantId, key, now);
      if (row === undefined) return undefined;
      const value = parseCachedValue(row.value);
      return value === undefined ? undefined : { ...toInfo(row), value };
    },

    async save(entry: CacheEntry) {
      const json = JSON.stringify(entry.value);
      await committer.run(() =>
        upsert.run(
          entry.tenantId,
          entry.key,
          entry.namespace,
          json,
          entry.sizeBytes,
          entry.modelId,
          entry.tokens.input,
          entry.tokens.output,
          entry.createdAt,
          entry.expiresAt,
          entry.hits,
          entry.lastHitAt,
        ),
      );
    },

    async delete(tenantId, key) {
      return committer.run(() => deleteOne.run(tenantId, key).changes > 0);
    },

    async deletePrefix(tenantId, prefix) {
      const upper = prefixUpperBound(prefix);
      return committer.run(() =>
        upper === undefined ? deleteFrom.all(tenantId, prefix) : deleteRange.all(tenantId, prefix, upper),
      );
    },

    async recordHit(tenantId, key, at, expiresAt) {
      await committer.run(() => hit.run(at, expiresAt, tenantId, key));
    },

    async info(tenantId, key, now) {
      const row = selectInfo.get(tenantId, key, now);
      return row === undefined ? undefined : toInfo(row);
    },

    async list(tenantId, prefix, limit, now) {
      const upper = prefixUpperBound(prefix);
      const rows =
        upper === undefined
          ? listFrom.all(tenantId, prefix, now, limit)
          : listRange.all(tenantId, prefix, upper, now, limit);
      return rows.map(toInfo);
    },

    async purgeExpired(now, limit) {
      return committer.run(() => purge.run(now, limit).changes);
    },
  };
}
