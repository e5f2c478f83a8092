-- Response cache, persistent tier (docs/design.md#caching, docs/design.md#storage). One row per (tenant, key); the
-- key is
-- `<agent>:<sha256 hex>`, so a prefix bust is a range scan on the primary key. `value` is the JSON
-- of the CachedResponse; the other columns describe it without parsing it.

CREATE TABLE cache_entries (
  tenant_id   TEXT NOT NULL,
  key         TEXT NOT NULL,
  namespace   TEXT NOT NULL,
  value       TEXT NOT NULL,
  size_bytes  INTEGER NOT NULL CHECK (size_bytes > 0),
  model_id    TEXT NOT NULL,
  tokens_in   INTEGER NOT NULL DEFAULT 0,
  tokens_out  INTEGER NOT NULL DEFAULT 0,
  created_at  INTEGER NOT NULL,
  -- Sliding: each hit moves it to `hit time + ttl`. Rows past it are misses until swept.
  expires_at  INTEGER NOT NULL,
  hits        INTEGER NOT NULL DEFAULT 0,
  last_hit_at INTEGER,
  PRIMARY KEY (tenant_id, key)
) WITHOUT ROWID;

-- The expiry sweep deletes the oldest-expired rows first, in small batches, without a full scan.
CREATE INDEX cache_entries_by_expiry ON cache_entries (expires_at);
