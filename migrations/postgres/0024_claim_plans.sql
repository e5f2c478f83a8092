-- The claim's candidates in the order its ranking wants them (tenant, then oldest first), holding
-- only roots still to run. Its plan used to walk workflows_roots_by_tenant, every root ever run,
-- filtering out the finished ones: a claim's cost grew with the table's history (a session's plan
-- made over a small table chose it, and kept it). This index gives the ranking its order at the
-- size of the live work, so no plan has a reason to prefer the history.
CREATE INDEX workflows_claimable_by_tenant ON workflows (tenant_id, created_at, id)
  WHERE parent_workflow_id IS NULL AND status IN ('idle', 'running');
DROP INDEX workflows_claimable;

-- The two hot functions look every row up by key (or walk the index above): a plan per call
-- bought nothing and cost a fifth of the group commit's server time (measured over the 10-step
-- job: 1 044 → 860 µs per call), so the session's generic plan serves every call. That plan is
-- made once, often over tables still small: joins by hash or merge are then off, so a batch's ids
-- meet their rows by key at any table size (a generic plan made cold hashed a bitmap scan of a
-- whole workflows index: 20 000 tuples read per commit; test/unit/store/postgres-plans.test.ts).
ALTER FUNCTION baton_group_commit SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION baton_group_commit SET enable_hashjoin = off;
ALTER FUNCTION baton_group_commit SET enable_mergejoin = off;
ALTER FUNCTION baton_claim SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION baton_claim SET enable_hashjoin = off;
ALTER FUNCTION baton_claim SET enable_mergejoin = off;
ALTER FUNCTION baton_claim SET enable_bitmapscan = off;
