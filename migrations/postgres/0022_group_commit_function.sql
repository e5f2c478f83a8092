-- The group commit's writes in one round trip (src/store/postgres/group-commit.ts): a batch's fence,
-- workflow and node patches, requests taken, journal rows and event notices, run by one call of this
-- function as one statement — its own transaction, its statements' plans kept by the session. On
-- PostgreSQL each statement and each round trip costs what a whole step costs on SQLite. The rarer
-- tables' statements (src/store/postgres/change-writes.ts: SQL constants of the build, never data)
-- come with their rows and run here too: p_before_* (new workflows) before the patches, p_after_*
-- (reflections, metrics, tool analytics, spend) after the journal; an after statement with
-- p_after_expect[i] >= 0 must touch that many rows, else BT404 names p_after_missing[i].
--
-- p_roots / p_epochs: the leases the batch's runs write under. When any of them is no longer this
-- owner's at that epoch, nothing is written and the lost roots are returned; otherwise '{}'.
-- p_workflows / p_nodes: patch rows (src/store/postgres/patches.ts): `m` is the bitmask of the
-- fields the row sets, in the order of the columns below; a workflow row's `taken` adds to
-- llm_requests_taken. p_*_count: their row counts (the planner's LIMIT, and the check).
-- p_append_ids / p_first_events: each workflow given events and the first seq of them in the
-- batch; it must exist and its events come after the stored ones.
-- Errors: SQLSTATE BT404 (a row the batch patches does not exist), BT409 (events out of order).
CREATE FUNCTION baton_group_commit(
  p_owner TEXT, p_roots TEXT[], p_epochs BIGINT[],
  p_before_sql TEXT[], p_before_rows JSON[],
  p_workflows JSON, p_workflow_count INT,
  p_nodes JSON, p_node_count INT,
  p_journal JSON, p_append_ids TEXT[], p_first_events BIGINT[],
  p_notices TEXT[],
  p_after_sql TEXT[], p_after_rows JSON[], p_after_expect INT[], p_after_missing TEXT[]
) RETURNS TEXT[] LANGUAGE plpgsql
-- Every statement here looks rows up by key. The session keeps one plan per statement, made once:
-- planned while a table was small, a sequential scan joined by hash would stay the plan as the table
-- grows (measured: a node patch of two rows scanning 11 000 nodes, 4 ms).
SET enable_seqscan = off
AS $$
DECLARE
  lost TEXT[];
  written INT;
  missing TEXT;
  bad RECORD;
BEGIN
  IF cardinality(p_roots) > 0 THEN
    -- FOR SHARE: no claim can move a root's epoch until this transaction ends.
    PERFORM 1 FROM workflows WHERE id = ANY (p_roots) FOR SHARE;
    SELECT array_agg(r.id) INTO lost
      FROM unnest(p_roots, p_epochs) AS r (id, epoch)
     WHERE NOT EXISTS (
       SELECT 1 FROM workflows w WHERE w.id = r.id AND w.lease_owner = p_owner AND w.lease_epoch = r.epoch);
    IF lost IS NOT NULL THEN
      RETURN lost;
    END IF;
  END IF;

  FOR i IN 1 .. coalesce(cardinality(p_before_sql), 0) LOOP
    EXECUTE p_before_sql[i] USING p_before_rows[i];
  END LOOP;

  IF p_workflow_count > 0 THEN
    UPDATE workflows t SET
      status = CASE WHEN p.m & 1 <> 0 THEN p.status ELSE t.status END,
      output = CASE WHEN p.m & 2 <> 0 THEN p.output ELSE t.output END,
      error = CASE WHEN p.m & 4 <> 0 THEN p.error ELSE t.error END,
      started_at = CASE WHEN p.m & 8 <> 0 THEN p.started_at ELSE t.started_at END,
      ended_at = CASE WHEN p.m & 16 <> 0 THEN p.ended_at ELSE t.ended_at END,
      cancel_requested = CASE WHEN p.m & 32 <> 0 THEN p.cancel_requested ELSE t.cancel_requested END,
      checkpoint = CASE WHEN p.m & 64 <> 0 THEN p.checkpoint ELSE t.checkpoint END,
      llm_requests_taken = t.llm_requests_taken + p.taken
      FROM (SELECT * FROM json_to_recordset(p_workflows) AS r (id TEXT, m INT, taken INT, status TEXT, output TEXT,
              error TEXT, started_at BIGINT, ended_at BIGINT, cancel_requested SMALLINT, checkpoint TEXT)
             LIMIT p_workflow_count) AS p
     WHERE t.id = p.id;
    GET DIAGNOSTICS written = ROW_COUNT;
    IF written <> p_workflow_count THEN
      SELECT r.id INTO missing FROM json_to_recordset(p_workflows) AS r (id TEXT)
       WHERE NOT EXISTS (SELECT 1 FROM workflows w WHERE w.id = r.id) LIMIT 1;
      RAISE EXCEPTION 'workflow %', missing USING ERRCODE = 'BT404';
    END IF;
  END IF;

  IF p_node_count > 0 THEN
    UPDATE nodes t SET
      status = CASE WHEN p.m & 1 <> 0 THEN p.status ELSE t.status END,
      attempts = CASE WHEN p.m & 2 <> 0 THEN p.attempts ELSE t.attempts END,
      output = CASE WHEN p.m & 4 <> 0 THEN p.output ELSE t.output END,
      error = CASE WHEN p.m & 8 <> 0 THEN p.error ELSE t.error END,
      started_at = CASE WHEN p.m & 16 <> 0 THEN p.started_at ELSE t.started_at END,
      ended_at = CASE WHEN p.m & 32 <> 0 THEN p.ended_at ELSE t.ended_at END,
      child_workflow_id = CASE WHEN p.m & 64 <> 0 THEN p.child_workflow_id ELSE t.child_workflow_id END,
      cache_keys = CASE WHEN p.m & 128 <> 0 THEN p.cache_keys ELSE t.cache_keys END
      FROM (SELECT * FROM json_to_recordset(p_nodes) AS r (id TEXT, m INT, status TEXT, attempts INT, output TEXT,
              error TEXT, started_at BIGINT, ended_at BIGINT, child_workflow_id TEXT, cache_keys TEXT)
             LIMIT p_node_count) AS p
     WHERE t.id = p.id;
    GET DIAGNOSTICS written = ROW_COUNT;
    IF written <> p_node_count THEN
      SELECT r.id INTO missing FROM json_to_recordset(p_nodes) AS r (id TEXT)
       WHERE NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = r.id) LIMIT 1;
      RAISE EXCEPTION 'node %', missing USING ERRCODE = 'BT404';
    END IF;
  END IF;

  IF cardinality(p_append_ids) > 0 THEN
    SELECT a.id, a.first, w.id IS NOT NULL AS known,
           (SELECT max(j.last_event) FROM journal j WHERE j.workflow_id = a.id) AS last
      INTO bad
      FROM unnest(p_append_ids, p_first_events) AS a (id, first)
      LEFT JOIN workflows w ON w.id = a.id
     WHERE w.id IS NULL OR a.first <= (SELECT max(j.last_event) FROM journal j WHERE j.workflow_id = a.id)
     LIMIT 1;
    IF FOUND THEN
      IF NOT bad.known THEN
        RAISE EXCEPTION 'workflow %', bad.id USING ERRCODE = 'BT404';
      END IF;
      RAISE EXCEPTION 'workflow %: event seq % is not after the stored %', bad.id, bad.first, bad.last
        USING ERRCODE = 'BT409';
    END IF;
  END IF;

  IF p_journal IS NOT NULL THEN
    INSERT INTO journal (workflow_id, tenant_id, last_event, events, spans, calls, tokens_in, tokens_out, cost_usd,
                         simulated_cost_usd)
    SELECT * FROM json_to_recordset(p_journal) AS j (workflow_id TEXT, tenant_id TEXT, last_event BIGINT, events TEXT,
             spans TEXT, calls INT, tokens_in BIGINT, tokens_out BIGINT, cost_usd FLOAT8, simulated_cost_usd FLOAT8);
  END IF;

  FOR i IN 1 .. coalesce(cardinality(p_after_sql), 0) LOOP
    EXECUTE p_after_sql[i] USING p_after_rows[i];
    GET DIAGNOSTICS written = ROW_COUNT;
    IF p_after_expect[i] >= 0 AND written <> p_after_expect[i] THEN
      RAISE EXCEPTION '%', p_after_missing[i] USING ERRCODE = 'BT404';
    END IF;
  END LOOP;

  IF p_notices IS NOT NULL THEN
    FOR i IN 1 .. cardinality(p_notices) LOOP
      PERFORM pg_notify('baton_events', p_notices[i]);
    END LOOP;
  END IF;
  RETURN '{}';
END
$$;
