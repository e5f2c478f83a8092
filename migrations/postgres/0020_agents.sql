-- The agent registry (src/store/postgres/agents.ts; the SQLite store's migrations/sqlite/0013 and
-- 0021): every version of every registered agent, per tenant. A PUT adds version n + 1; retiring a
-- name keeps one tombstone row (its last version, config emptied, deleted_at set) so a new POST of
-- the name continues the numbering. Names are COLLATE "C": listed and paged bytewise, as SQLite's
-- BINARY orders them, so cursors mean the same on both stores whatever the database's locale.
CREATE TABLE agents (
  tenant_id  TEXT NOT NULL,
  name       TEXT COLLATE "C" NOT NULL,
  version    INTEGER NOT NULL CHECK (version >= 1),
  role       TEXT CHECK (role IN ('planning', 'development', 'testing', 'review')),
  -- The AgentConfig JSON (src/domain/definition.ts), parsed back through zod.
  config     TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  deleted_at BIGINT,
  PRIMARY KEY (tenant_id, name, version)
);
-- Tombstones, dropped by age.
CREATE INDEX agents_retired ON agents (deleted_at) WHERE deleted_at IS NOT NULL;
