-- Retention (src/store/retention.repo.ts): finished workflow trees older than RETENTION_DAYS are
-- deleted in small batches, with everything they own. These indexes let each batch find its rows
-- without a scan: the finished roots oldest first, and the per-workflow rows of tables that had no
-- index by workflow.
--
-- auto_vacuum = INCREMENTAL (so freed pages can be given back to the file system) cannot be set in
-- a migration: an existing database needs a VACUUM, which cannot run inside the migration's
-- transaction. store/db.ts sets it when the database is opened (see `enableIncrementalVacuum`).

-- Repeats the sweep query's WHERE clause verbatim so the planner uses it.
CREATE INDEX workflows_finished_roots ON workflows (ended_at)
  WHERE parent_workflow_id IS NULL AND status IN ('completed', 'failed', 'cancelled');
CREATE INDEX idempotency_keys_by_workflow ON idempotency_keys (workflow_id);
CREATE INDEX tool_calls_by_workflow ON tool_calls (workflow_id);
CREATE INDEX retrieval_runs_by_workflow ON retrieval_runs (workflow_id);
-- Retired agents (a tombstone row per name, store/agents.repo.ts) are dropped by age.
CREATE INDEX agents_retired ON agents (deleted_at) WHERE deleted_at IS NOT NULL;
