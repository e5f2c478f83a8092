-- The workflow aggregate on PostgreSQL: workflows, their nodes and the idempotency keys that
-- create them. The columns mirror the SQLite store's (migrations/sqlite/) so one row mapping serves
-- both. Times are epoch milliseconds (BIGINT), as everywhere in baton. JSON values (definition,
-- output, error, checkpoint, routing, cache keys) are TEXT, not JSONB: JSONB reorders object keys
-- and drops duplicates, and a definition must read back byte for byte (its hash keys idempotency
-- and the cache).

CREATE TABLE workflows (
  id                 TEXT PRIMARY KEY,
  tenant_id          TEXT NOT NULL,
  name               TEXT NOT NULL,
  status             TEXT NOT NULL CHECK (status IN ('idle', 'running', 'completed', 'failed', 'cancelled')),
  correlation_id     TEXT,
  parent_workflow_id TEXT REFERENCES workflows (id),
  -- No foreign key: nodes reference workflows, so a key back would make the two tables circular.
  parent_node_id     TEXT,
  root_workflow_id   TEXT NOT NULL,
  depth              INTEGER NOT NULL DEFAULT 0,
  trace_id           TEXT NOT NULL,
  definition         TEXT NOT NULL,
  output             TEXT,
  error              TEXT,
  cancel_requested   SMALLINT NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1)),
  created_at         BIGINT NOT NULL,
  started_at         BIGINT,
  ended_at           BIGINT,
  checkpoint         TEXT,
  llm_requests_taken INTEGER NOT NULL DEFAULT 0,
  routing            TEXT
);

CREATE INDEX workflows_by_parent ON workflows (parent_workflow_id, id) WHERE parent_workflow_id IS NOT NULL;
CREATE INDEX workflows_by_root ON workflows (root_workflow_id, id) WHERE parent_workflow_id IS NOT NULL;
CREATE INDEX workflows_by_tenant ON workflows (tenant_id, id);
CREATE INDEX workflows_by_tenant_correlation ON workflows (tenant_id, correlation_id, id)
  WHERE correlation_id IS NOT NULL;
CREATE INDEX workflows_by_tenant_name ON workflows (tenant_id, name, id);
CREATE INDEX workflows_by_tenant_status ON workflows (tenant_id, status, id);
CREATE INDEX workflows_finished_roots ON workflows (ended_at)
  WHERE parent_workflow_id IS NULL AND status IN ('completed', 'failed', 'cancelled');
CREATE INDEX workflows_resumable ON workflows (id) WHERE status IN ('idle', 'running') AND parent_workflow_id IS NULL;
CREATE INDEX workflows_root_by_trace ON workflows (trace_id, tenant_id) WHERE parent_workflow_id IS NULL;
CREATE INDEX workflows_roots_by_tenant ON workflows (tenant_id, id) WHERE parent_workflow_id IS NULL;

CREATE TABLE nodes (
  id                TEXT PRIMARY KEY,
  workflow_id       TEXT NOT NULL REFERENCES workflows (id),
  tenant_id         TEXT NOT NULL,
  parent_id         TEXT,
  name              TEXT NOT NULL,
  -- Node kinds are checked by the definition schema, not here (a new kind needs no migration).
  type              TEXT NOT NULL,
  position          INTEGER NOT NULL,
  depth             INTEGER NOT NULL,
  status            TEXT NOT NULL CHECK (status IN ('idle', 'running', 'completed', 'failed', 'cancelled')),
  attempts          INTEGER NOT NULL DEFAULT 0,
  output            TEXT,
  error             TEXT,
  child_workflow_id TEXT,
  started_at        BIGINT,
  ended_at          BIGINT,
  cache_keys        TEXT
);

CREATE INDEX nodes_by_workflow ON nodes (workflow_id, id);

CREATE TABLE idempotency_keys (
  tenant_id   TEXT NOT NULL,
  key         TEXT NOT NULL,
  body_hash   TEXT NOT NULL,
  workflow_id TEXT NOT NULL REFERENCES workflows (id),
  created_at  BIGINT NOT NULL,
  PRIMARY KEY (tenant_id, key)
);

CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
CREATE INDEX idempotency_keys_by_workflow ON idempotency_keys (workflow_id);
