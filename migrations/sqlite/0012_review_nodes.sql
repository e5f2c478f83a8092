-- Review nodes (docs/design.md#complexity-allocation-selection-and-review): `nodes.type` admits 'review'. SQLite
-- cannot change a CHECK in place, so
-- the table is rebuilt: the new one is filled, the old one dropped, the new one takes its name.
-- `reflections.node_id` references nodes by name, so it names the new table after the rename. The
-- migration runs with foreign keys on (no PRAGMA can turn them off inside its transaction), so the
-- reflection rows step aside while the old table is dropped and come back once the new one is named.
CREATE TEMP TABLE reflections_aside AS SELECT * FROM reflections;
DELETE FROM reflections;

CREATE TABLE nodes_with_review (
  id                TEXT PRIMARY KEY,
  workflow_id       TEXT NOT NULL REFERENCES workflows (id),
  tenant_id         TEXT NOT NULL,
  parent_id         TEXT,
  name              TEXT NOT NULL,
  type              TEXT NOT NULL CHECK (type IN ('prompt', 'sequence', 'parallel', 'review', 'workflow')),
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

INSERT INTO nodes_with_review SELECT * FROM nodes;
DROP TABLE nodes;
ALTER TABLE nodes_with_review RENAME TO nodes;
CREATE INDEX nodes_by_workflow ON nodes (workflow_id, id);

INSERT INTO reflections SELECT * FROM temp.reflections_aside;
DROP TABLE temp.reflections_aside;
