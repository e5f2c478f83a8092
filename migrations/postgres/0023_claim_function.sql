-- A claim in one round trip (src/store/postgres/leases.ts): the advisory lock that serializes
-- claims across instances, then the claim itself, in one call — its own transaction, so the lock is
-- held for that statement alone. The function is VOLATILE, so the claim's query takes its snapshot
-- after the lock is granted and counts every lease the claims before it committed: two instances
-- cannot both take a tenant's last place.
--
-- Claims up to p_limit root workflows to run: unleased or expired, not parked (the predicate of
-- leases.ts's `claimable`), tenants with the fewest live leases first (ranked by the count each
-- claim would bring its tenant to, so a flooding tenant waits behind the others), never more than
-- p_max_per_tenant live per tenant. One row: the claimed roots as parallel arrays (`untouched`:
-- the root's first lease on a row still idle and not cancelled) and `waiting`, the claimable roots
-- this claim left (past p_limit or a tenant's cap), so a caller whose claim left none need not
-- claim again until it hears of new work.
CREATE FUNCTION baton_claim(p_owner TEXT, p_limit INT, p_max_per_tenant INT, p_lease_ms BIGINT,
  OUT ids TEXT[], OUT tenant_ids TEXT[], OUT epochs BIGINT[], OUT afters BIGINT[], OUT created BIGINT[],
  OUT untouched BOOLEAN[], OUT waiting BIGINT)
LANGUAGE plpgsql VOLATILE
-- Its scans have indexes (workflows_leased, workflows_claimable); the plan the session keeps must
-- not become a sequential scan of every workflow ever run (see 0022).
SET enable_seqscan = off
AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(7161440526158737006);
  WITH live AS (
    SELECT l.tenant_id, count(*)::int AS n FROM workflows l
     WHERE l.lease_owner IS NOT NULL AND l.lease_until > now()
     GROUP BY l.tenant_id
  ), ranked AS (
    SELECT w.id, w.created_at,
           coalesce(l.n, 0) + row_number() OVER (PARTITION BY w.tenant_id ORDER BY w.created_at, w.id) AS after
      FROM workflows w LEFT JOIN live l ON l.tenant_id = w.tenant_id
     WHERE w.parent_workflow_id IS NULL AND w.status IN ('idle', 'running') AND w.parked = 0
       AND (w.lease_owner IS NULL OR w.lease_until <= now())
  ), picked AS (
    SELECT r.id, r.after, r.created_at FROM ranked r WHERE r.after <= p_max_per_tenant
     ORDER BY r.after, r.created_at, r.id LIMIT p_limit
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
