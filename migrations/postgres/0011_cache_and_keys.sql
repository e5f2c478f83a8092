-- The response cache's shared tier and the API keys on PostgreSQL (store/postgres/cache.ts,
-- api-keys.ts), with the columns of the SQLite tables (migrations/sqlite/0001, 0002).

-- One row per (tenant, key), shared by every instance: the first instance to store an answer
-- keeps it (insert-if-absent), the others read it. Keys in "C" collation: byte order, as SQLite
-- compares them, so a prefix bust is a range scan on the primary key and lists come in one order.
CREATE TABLE cache_entries (
  tenant_id   TEXT NOT NULL,
  key         TEXT COLLATE "C" NOT NULL,
  namespace   TEXT NOT NULL,
  value       TEXT NOT NULL,
  size_bytes  INTEGER NOT NULL CHECK (size_bytes > 0),
  model_id    TEXT NOT NULL,
  tokens_in   INTEGER NOT NULL DEFAULT 0,
  tokens_out  INTEGER NOT NULL DEFAULT 0,
  created_at  BIGINT NOT NULL,
  -- Sliding: each hit moves it to `hit time + ttl`. Rows past it are misses until swept.
  expires_at  BIGINT NOT NULL,
  hits        INTEGER NOT NULL DEFAULT 0,
  last_hit_at BIGINT,
  PRIMARY KEY (tenant_id, key)
);
-- The expiry sweep deletes the oldest-expired rows first, in small batches, without a full scan.
CREATE INDEX cache_entries_by_expiry ON cache_entries (expires_at);

-- Hashes only (SHA-256 of the key), never the keys.
CREATE TABLE api_keys (
  key_hash   TEXT PRIMARY KEY,
  tenant_id  TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
