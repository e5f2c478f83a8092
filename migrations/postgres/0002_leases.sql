-- Run ownership across instances: a root workflow is run by the instance holding its lease.
-- lease_epoch grows by one at every claim, so a write carrying an older epoch is from an instance
-- that lost the run (fencing). lease_until is database time (now()), never an instance's clock.
-- PostgreSQL only: the SQLite store is one process and needs no lease.
ALTER TABLE workflows
  ADD COLUMN lease_owner TEXT,
  ADD COLUMN lease_epoch BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN lease_until TIMESTAMPTZ;

-- The claim's candidates: root workflows still to run, oldest first.
CREATE INDEX workflows_claimable ON workflows (created_at, id)
  WHERE parent_workflow_id IS NULL AND status IN ('idle', 'running');
-- Live leases, by tenant (the claim's fairness and cap) and by owner (the heartbeat).
CREATE INDEX workflows_leased ON workflows (tenant_id, lease_until) WHERE lease_owner IS NOT NULL;
CREATE INDEX workflows_leased_by_owner ON workflows (lease_owner) WHERE lease_owner IS NOT NULL;
