-- Efficiency records, rewards and feedback (docs/design.md#events-spans-metrics-and-rewards). Times are INTEGER epoch
-- milliseconds.
-- `efficiency` and `rewards` rows are written in the same transaction as the workflow's final
-- state; `record` is the EfficiencyRecord JSON (src/domain/metrics.ts), parsed back through zod.

CREATE TABLE efficiency (
  workflow_id TEXT PRIMARY KEY REFERENCES workflows (id),
  tenant_id   TEXT NOT NULL,
  task_type   TEXT NOT NULL,
  complexity  TEXT NOT NULL CHECK (complexity IN ('trivial', 'simple', 'moderate', 'complex', 'critical')),
  outcome     TEXT NOT NULL CHECK (outcome IN ('success', 'partial', 'failure')),
  -- The record's completed_at.
  created_at  INTEGER NOT NULL,
  record      TEXT NOT NULL
);

-- GET /v1/metrics/efficiency: a tenant's records in a time range, optionally of one task type or
-- complexity, newest first.
CREATE INDEX efficiency_by_tenant_time ON efficiency (tenant_id, created_at);
CREATE INDEX efficiency_by_tenant_type_time ON efficiency (tenant_id, task_type, created_at);
CREATE INDEX efficiency_by_tenant_complexity_time ON efficiency (tenant_id, complexity, created_at);

CREATE TABLE rewards (
  workflow_id       TEXT PRIMARY KEY REFERENCES workflows (id),
  tenant_id         TEXT NOT NULL,
  task_type         TEXT NOT NULL,
  complexity        TEXT NOT NULL CHECK (complexity IN ('trivial', 'simple', 'moderate', 'complex', 'critical')),
  outcome_reward    REAL NOT NULL,
  efficiency_reward REAL NOT NULL,
  -- NULL until feedback arrives.
  preference_reward REAL,
  aggregate_reward  REAL NOT NULL,
  created_at        INTEGER NOT NULL,
  updated_at        INTEGER NOT NULL
);

-- GET /v1/rewards (time range) and agent selection (mean aggregate reward per task type and complexity).
CREATE INDEX rewards_by_tenant_time ON rewards (tenant_id, created_at);
CREATE INDEX rewards_by_tenant_type ON rewards (tenant_id, task_type, complexity, created_at);

CREATE TABLE feedback (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  workflow_id TEXT NOT NULL REFERENCES workflows (id),
  tenant_id   TEXT NOT NULL,
  -- JSON array of the seed's actions (commit, deploy, no_edits, revert, manual_fix, retry_different).
  actions     TEXT NOT NULL,
  note        TEXT,
  created_at  INTEGER NOT NULL
);

CREATE INDEX feedback_by_workflow ON feedback (workflow_id, id);
