-- What the retention sweep deleted, as the dashboard and model analytics still count it
-- (src/store/postgres/usage-analytics.ts foldSweptUsage): per tenant and UTC hour (grain 0) and UTC
-- day (grain 1), the sums of the swept trees' rows, written in the sweep's transaction before its
-- deletes. SQLite keeps these sums in its trigger-fed roll-ups (migrations/sqlite/0022), which
-- retention leaves alone; PostgreSQL reads live rows directly and adds these for the whole hours
-- and days of a window, so both answer alike after a sweep. JSON (DashboardSums, ModelSums[] with
-- latencies by roll-up bucket): read and added up in the adapter, never queried into.
CREATE TABLE usage_swept (
  tenant_id TEXT NOT NULL,
  grain     SMALLINT NOT NULL CHECK (grain IN (0, 1)),
  period    BIGINT NOT NULL,
  dashboard TEXT NOT NULL,
  models    TEXT NOT NULL,
  PRIMARY KEY (tenant_id, grain, period)
);
