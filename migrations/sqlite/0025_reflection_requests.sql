-- A reflection asked for by hand (POST /v1/workflows/{id}/nodes/{nodeId}/reflect, docs/workflows.md#reflection): the row is written in the same transaction that reopens the failed workflow, so a
-- request exists exactly when a reopening happened. The run reads the newest request of its
-- workflow: the node it reflects on, the person's note, and the time from which its deadline runs
-- and before which other failures are final.
CREATE TABLE reflection_requests (
  id           TEXT PRIMARY KEY,
  workflow_id  TEXT NOT NULL REFERENCES workflows (id),
  tenant_id    TEXT NOT NULL,
  node_id      TEXT NOT NULL REFERENCES nodes (id),
  reason       TEXT,
  requested_at INTEGER NOT NULL
);
CREATE INDEX reflection_requests_by_node ON reflection_requests (workflow_id, node_id);
