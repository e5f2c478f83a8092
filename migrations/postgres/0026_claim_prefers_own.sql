-- The claim (0023) takes the roots the caller names in p_prefer first, when they are claimable:
-- an instance claims the submissions it accepted itself (src/store/postgres/leased-queue.ts), so
-- roots run where the load balancer sent them rather than on whichever instance claimed first (2
-- instances over the latency-bound job: 159/241 of 400 roots, the wall set by the larger share).
-- A preferred root ranks first within its tenant (its place under the cap, `after`) and the claim
-- takes preferred roots first; every root it takes still has `after <= p_max_per_tenant`, so the
-- per-tenant cap holds as before, and the tenants' order applies among the rest. p_prefer has a
-- default, so a caller of the four-argument claim (an instance not yet upgraded) still claims.
-- The settings are 0023's and 0024's (a function made anew starts without them).
DROP FUNCTION baton_claim(TEXT, INT, INT, BIGINT);
CREATE FUNCTION baton_claim(p_owner TEXT, p_limit INT, p_max_per_tenant INT, p_lease_ms BIGINT,
  p_prefer TEXT[] DEFAULT '{}',
  OUT ids TEXT[], OUT tenant_ids TEXT[], OUT epochs BIGINT[], OUT afters BIGINT[], OUT created BIGINT[],
  OUT untouched BOOLEAN[], OUT waiting BIGINT)
LANGUAGE plpgsql VOLATILE
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
SET enable_hashjoin = off
SET enable_mergejoin = off
SET enable_bitmapscan = off
AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(7161440526158737006);
  WITH live AS (
    SELECT l.tenant_id, count(*)::int AS n FROM workflows l
     WHERE l.lease_owner IS NOT NULL AND l.lease_until > now()
     GROUP BY l.tenant_id
  ), ranked AS (
    SELECT w.id, w.created_at,
           coalesce(l.n, 0) + row_number() OVER (PARTITION BY w.tenant_id
             ORDER BY (w.id = ANY (p_prefer)) DESC, w.created_at, w.id) AS after
      FROM workflows w LEFT JOIN live l ON l.tenant_id = w.tenant_id
     WHERE w.parent_workflow_id IS NULL AND w.status IN ('idle', 'running') AND w.parked = 0
       AND (w.lease_owner IS NULL OR w.lease_until <= now())
  ), picked AS (
    SELECT r.id, r.after, r.created_at FROM ranked r WHERE r.after <= p_max_per_tenant
     ORDER BY (r.id = ANY (p_prefer)) DESC, r.after, r.created_at, r.id LIMIT p_limit
  ), locked AS (
    SELECT c.id, p.after, p.created_at FROM workflows c JOIN picked p ON p.id = c.id
     WHERE c.parent_workflow_id IS NULL AND c.status IN ('idle', 'running') AND c.parked = 0
       AND (c.lease_owner IS NULL OR c.lease_until <= now())
       FOR UPDATE OF c SKIP LOCKED
  ), claimed AS (
    UPDATE workflows w
       SET lease_owner = p_owner, lease_epoch = w.lease_epoch + 1,
           lease_until = now() + p_lease_ms * interval '1 millisecond'
      FROM locked
     WHERE w.id = locked.id
    RETURNING w.id, w.tenant_id, w.lease_epoch, locked.after, locked.created_at,
              (w.lease_epoch = 1 AND w.status = 'idle' AND w.cancel_requested = 0) AS untouched
  )
  SELECT coalesce(array_agg(c.id), '{}'), coalesce(array_agg(c.tenant_id), '{}'), coalesce(array_agg(c.lease_epoch), '{}'),
         coalesce(array_agg(c.after), '{}'), coalesce(array_agg(c.created_at), '{}'),
         coalesce(array_agg(c.untouched), '{}'), (SELECT count(*) FROM ranked) - count(*)
    INTO ids, tenant_ids, epochs, afters, created, untouched, waiting
    FROM claimed c;
END
$$;
