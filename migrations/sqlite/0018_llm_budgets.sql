-- Money limits (src/engine/request-budget.ts, src/engine/tenant-spend.ts).
-- llm_requests_taken, on a root workflow's row: provider requests its whole tree (the root, its
-- declared and spawned children, nested) has taken from the root's options.limits.maxLlmCalls. It
-- is incremented, durably, before each request is sent, so a resumed tree keeps paying from the
-- same budget. 0 on every other row. Trees in flight at the upgrade start counting from 0.
ALTER TABLE workflows ADD COLUMN llm_requests_taken INTEGER NOT NULL DEFAULT 0;

-- What each tenant's provider calls cost in real money per UTC day (day = epoch ms / 86 400 000,
-- floored), summed from the generation spans' cost_usd (simulated `sim/*` cost excluded) in the
-- same transaction as the journal row that records them: TENANT_DAILY_BUDGET_USD reads it.
CREATE TABLE tenant_spend_days (
  tenant_id TEXT NOT NULL,
  day       INTEGER NOT NULL,
  cost_usd  REAL NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, day)
) WITHOUT ROWID;
