-- Reflection history (docs/design.md#three-levels-of-reflection): one row per reflection, written in the same
-- transaction as the
-- node result it belongs to. Ids are time-ordered (`rf_…`), so `ORDER BY id` is creation order.
-- error and resolution are JSON TEXT, parsed back through zod (src/domain/reflection.ts).

CREATE TABLE reflections (
  id          TEXT PRIMARY KEY,
  workflow_id TEXT NOT NULL REFERENCES workflows (id),
  tenant_id   TEXT NOT NULL,
  node_id     TEXT NOT NULL REFERENCES nodes (id),
  node_name   TEXT NOT NULL,
  -- The attempt that failed and was reflected on.
  attempt     INTEGER NOT NULL CHECK (attempt >= 1),
  timestamp   INTEGER NOT NULL,
  level       TEXT NOT NULL CHECK (level IN ('prompt', 'agent', 'workflow')),
  reason      TEXT NOT NULL,
  error       TEXT NOT NULL,
  resolution  TEXT NOT NULL,
  -- NULL until the attempt that followed finished (and for good when none followed).
  success     INTEGER CHECK (success IN (0, 1))
);

-- A workflow's history in order (GET /v1/workflows/{id}/reflections, resume).
CREATE INDEX reflections_by_workflow ON reflections (workflow_id, id);
