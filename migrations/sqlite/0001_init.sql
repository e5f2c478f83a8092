-- baton schema v1 (docs/design.md#storage). Times are INTEGER epoch milliseconds; JSON values are TEXT.
-- Ids are time-ordered (src/domain/ids.ts), so `ORDER BY id` is creation order and inserts stay
-- append-mostly. Every row holding tenant data carries tenant_id.

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
  cancel_requested   INTEGER NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1)),
  created_at         INTEGER NOT NULL,
  started_at         INTEGER,
  ended_at           INTEGER
);

-- List pages: newest first per tenant, optionally narrowed by one filter column.
CREATE INDEX workflows_by_tenant ON workflows (tenant_id, id);
CREATE INDEX workflows_by_tenant_status ON workflows (tenant_id, status, id);
CREATE INDEX workflows_by_tenant_name ON workflows (tenant_id, name, id);
CREATE INDEX workflows_by_tenant_correlation ON workflows (tenant_id, correlation_id, id)
  WHERE correlation_id IS NOT NULL;
-- Children of a workflow (also backs the parent foreign key and the cancel cascade).
CREATE INDEX workflows_by_parent ON workflows (parent_workflow_id, id)
  WHERE parent_workflow_id IS NOT NULL;
-- The work to resume at start: the query must repeat this WHERE clause verbatim.
CREATE INDEX workflows_resumable ON workflows (id)
  WHERE status IN ('idle', 'running') AND parent_workflow_id IS NULL;

CREATE TABLE nodes (
  id                TEXT PRIMARY KEY,
  workflow_id       TEXT NOT NULL REFERENCES workflows (id),
  tenant_id         TEXT NOT NULL,
  parent_id         TEXT,
  name              TEXT NOT NULL,
  type              TEXT NOT NULL CHECK (type IN ('prompt', 'sequence', 'parallel', 'workflow')),
  position          INTEGER NOT NULL,
  depth             INTEGER NOT NULL,
  status            TEXT NOT NULL CHECK (status IN ('idle', 'running', 'completed', 'failed', 'cancelled')),
  attempts          INTEGER NOT NULL DEFAULT 0,
  output            TEXT,
  error             TEXT,
  child_workflow_id TEXT,
  started_at        INTEGER,
  ended_at          INTEGER
);

CREATE INDEX nodes_by_workflow ON nodes (workflow_id, id);

-- Small rows keyed by (workflow, seq): a clustered table keeps one workflow's events adjacent.
CREATE TABLE events (
  workflow_id TEXT NOT NULL REFERENCES workflows (id),
  seq         INTEGER NOT NULL,
  tenant_id   TEXT NOT NULL,
  type        TEXT NOT NULL,
  node_id     TEXT,
  at          INTEGER NOT NULL,
  payload     TEXT NOT NULL,
  PRIMARY KEY (workflow_id, seq)
) WITHOUT ROWID;

CREATE TABLE idempotency_keys (
  tenant_id   TEXT NOT NULL,
  key         TEXT NOT NULL,
  body_hash   TEXT NOT NULL,
  workflow_id TEXT NOT NULL REFERENCES workflows (id),
  created_at  INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, key)
) WITHOUT ROWID;

-- Lets a future sweep drop keys past their 24 h window without a full scan.
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);

CREATE TABLE api_keys (
  key_hash   TEXT PRIMARY KEY,
  tenant_id  TEXT NOT NULL,
  created_at INTEGER NOT NULL
) WITHOUT ROWID;
