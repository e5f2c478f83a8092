-- Node kinds are validated where they are defined (the definition's zod schema and the engine's
-- handler table, docs/design.md#workflow-definitions), not by a CHECK listing them: a new kind then
-- needs no migration. SQLite cannot drop a CHECK in place, so the table is rebuilt as in 0012: the
-- rows referencing nodes (reflections, reflection_requests) step aside while the old table is
-- dropped (foreign keys stay on inside a migration) and come back once the new one is named.
CREATE TEMP TABLE reflections_aside AS SELECT * FROM reflections;
DELETE FROM reflections;
CREATE TEMP TABLE reflection_requests_aside AS SELECT * FROM reflection_requests;
DELETE FROM reflection_requests;

CREATE TABLE nodes_any_kind (
  id                TEXT PRIMARY KEY,
  workflow_id       TEXT NOT NULL REFERENCES workflows (id),
  tenant_id         TEXT NOT NULL,
  parent_id         TEXT,
  name              TEXT NOT NULL,
  type              TEXT NOT NULL,
  position          INTEGER NOT NULL,
  depth             INTEGER NOT NULL,
  status            TEXT NOT NULL CHECK (status IN ('idle', 'running', 'completed', 'failed', 'cancelled')),
  attempts          INTEGER NOT NULL DEFAULT 0,
  output            TEXT,
  error             TEXT,
  child_workflow_id TEXT,
  started_at        INTEGER,
  ended_at          INTEGER,
  cache_keys        TEXT
);

INSERT INTO nodes_any_kind SELECT * FROM nodes;
DROP TABLE nodes;
ALTER TABLE nodes_any_kind RENAME TO nodes;
CREATE INDEX nodes_by_workflow ON nodes (workflow_id, id);

INSERT INTO reflections SELECT * FROM temp.reflections_aside;
DROP TABLE temp.reflections_aside;
INSERT INTO reflection_requests SELECT * FROM temp.reflection_requests_aside;
DROP TABLE temp.reflection_requests_aside;
