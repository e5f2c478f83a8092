-- Cheaper journal rows, the table every group commit writes most (≈ 3 rows per step).
--
-- Its foreign key to workflows cost a trigger and a key lookup per row. baton_group_commit's append
-- check (0022) covers every workflow its journal rows name instead, once per workflow in one
-- statement (a null first seq: span writes alone, only its existence is checked); the one other writer (the span ends of a run taken
-- over, src/store/postgres/journal.ts) writes for workflows it has just read, under their lock.
ALTER TABLE journal DROP CONSTRAINT journal_workflow_id_fkey;

-- A row over ~2 kB is compressed: lz4 costs a fraction of pglz's CPU for JSON (pglz_compress was
-- 2.5 % of the server's CPU over the 10-step job). Servers built without lz4 keep pglz.
DO $$
BEGIN
  ALTER TABLE journal ALTER COLUMN events SET COMPRESSION lz4, ALTER COLUMN spans SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  NULL;
END
$$;
