import { CachedResponseSchema, type CacheEntry, type CacheEntryInfo, type CacheStore } from '../../domain/cache.js';
import type { Db } from './db.js';
import type { GroupCommitter } from './group-commit.js';

/** The persistent tier of the response cache (docs/design.md#caching): reads direct, writes group-committed. */

const INFO_COLUMNS =
  'key, tenant_id, namespace, size_bytes, created_at, expires_at, hits, last_hit_at, model_id, tokens_in, tokens_out';

interface InfoRow {
  key: string;
  tenant_id: string;
  namespace: string;
  size_bytes: number;
  created_at: number;
  expires_at: number;
  hits: number;
  last_hit_at: number | null;
  model_id: string;
  tokens_in: number;
  tokens_out: number;
}

interface EntryRow extends InfoRow {
  value: string;
}

function toInfo(row: InfoRow): CacheEntryInfo {
  return {
    key: row.key,
    tenantId: row.tenant_id,
    namespace: row.namespace,
    sizeBytes: row.size_bytes,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    hits: row.hits,
    lastHitAt: row.last_hit_at,
    modelId: row.model_id,
    tokens: { input: row.tokens_in, output: row.tokens_out },
  };
}

/**
 * The smallest string greater than every string that starts with `prefix`, in SQLite's BINARY
 * order (UTF-8 bytes, i.e. code point order): the prefix with its last code point incremented.
 * Unlike `prefix + '\uffff'` it also bounds keys continuing with astral characters. Undefined when
 * no bound exists (empty prefix, or only U+10FFFF).
 */
export function prefixUpperBound(prefix: string): string | undefined {
  const codePoints = Array.from(prefix);
  while (codePoints.length > 0) {
    const last = (codePoints.pop() as string).codePointAt(0) as number;
    if (last < 0x10ffff) {
      // Skip the surrogate block: those code points do not exist as characters in UTF-8.
      const next = last + 1 === 0xd800 ? 0xe000 : last + 1;
      return codePoints.join('') + String.fromCodePoint(next);
    }
  }
  return undefined;
}

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
      // A row this build cannot read (older format, hand edit) is a miss, never a crash or a bad answer.
      let parsed: unknown;
      try {
        parsed = JSON.parse(row.value);
      } catch {
        return undefined;
      }
      const value = CachedResponseSchema.safeParse(parsed);
      if (!value.success) return undefined;
      return { ...toInfo(row), value: value.data };
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
