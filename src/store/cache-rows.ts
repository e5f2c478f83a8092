import { type CachedResponse, CachedResponseSchema, type CacheEntryInfo } from '../domain/cache.js';

/**
 * What both persistent cache tiers (store/sqlite/cache.repo.ts, store/postgres/cache.ts) share, free of
 * any driver: the row of `cache_entries`, its mapping, the prefix bound of prefix scans and the
 * read-back of a stored value.
 */

export const INFO_COLUMNS =
  'key, tenant_id, namespace, size_bytes, created_at, expires_at, hits, last_hit_at, model_id, tokens_in, tokens_out';

export interface InfoRow {
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

export interface EntryRow extends InfoRow {
  value: string;
}

export function toInfo(row: InfoRow): CacheEntryInfo {
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
 * order and PostgreSQL's "C" collation (UTF-8 bytes, i.e. code point order): the prefix with its last code point incremented.
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

/** A stored value this build cannot read (older format, hand edit) is a miss, never a crash or a bad answer. */
export function parseCachedValue(json: string): CachedResponse | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return undefined;
  }
  const value = CachedResponseSchema.safeParse(parsed);
  return value.success ? value.data : undefined;
}
