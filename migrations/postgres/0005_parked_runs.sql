-- A root workflow that waits for a person (a critical checkpoint still pending) is parked when its
-- lease is released: no instance claims it until a decision or a cancel unparks it. Without the
-- flag the claim would pick it up again at once, only for the run to find it still waiting.
ALTER TABLE workflows ADD COLUMN parked SMALLINT NOT NULL DEFAULT 0 CHECK (parked IN (0, 1));

DROP INDEX workflows_claimable;
CREATE INDEX workflows_claimable ON workflows (created_at, id)
  WHERE parent_workflow_id IS NULL AND status IN ('idle', 'running') AND parked = 0;
