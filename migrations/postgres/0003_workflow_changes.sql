-- Everything a workflow's creation and its engine commits write besides the workflow and node
-- rows (migrations/postgres/0001): the journal of events and spans, reflections and the requests
-- for them, the efficiency record and reward of an ended run and its feedback, tool calls and
-- retrieval runs, the agents a run's prompts use, and each tenant's real spend per UTC day.
-- Columns mirror the SQLite store's (migrations/sqlite/); times are epoch milliseconds (BIGINT);
-- SQLite's REAL is an 8-byte float, so DOUBLE PRECISION; SQLite's 0/1 flags stay SMALLINT 0/1 so
-- one row mapping serves both stores.

-- One row per workflow per commit that gave it events or span writes (src/store/postgres/journal.ts):
-- events and span writes as JSON arrays of positional tuples, and what its generation spans add.
CREATE TABLE journal (
  seq                BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  workflow_id        TEXT NOT NULL REFERENCES workflows (id),
  tenant_id          TEXT NOT NULL,
  last_event         BIGINT,
  events             TEXT,
  spans              TEXT,
  calls              INTEGER NOT NULL DEFAULT 0,
  tokens_in          BIGINT NOT NULL DEFAULT 0,
  tokens_out         BIGINT NOT NULL DEFAULT 0,
  cost_usd           DOUBLE PRECISION NOT NULL DEFAULT 0,
  simulated_cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0
);
CREATE INDEX journal_by_workflow ON journal (workflow_id, seq);
CREATE INDEX journal_by_workflow_last_event ON journal (workflow_id, last_event) WHERE last_event IS NOT NULL;

CREATE TABLE reflections (
  id          TEXT PRIMARY KEY,
  workflow_id TEXT NOT NULL REFERENCES workflows (id),
  tenant_id   TEXT NOT NULL,
  node_id     TEXT NOT NULL REFERENCES nodes (id),
  node_name   TEXT NOT NULL,
  attempt     INTEGER NOT NULL CHECK (attempt >= 1),
  timestamp   BIGINT NOT NULL,
  level       TEXT NOT NULL CHECK (level IN ('prompt', 'agent', 'workflow')),
  reason      TEXT NOT NULL,
  error       TEXT NOT NULL,
  resolution  TEXT NOT NULL,
  success     SMALLINT CHECK (success IN (0, 1))
);
CREATE INDEX reflections_by_workflow ON reflections (workflow_id, id);

CREATE TABLE reflection_requests (
  id           TEXT PRIMARY KEY,
  workflow_id  TEXT NOT NULL REFERENCES workflows (id),
  tenant_id    TEXT NOT NULL,
  node_id      TEXT NOT NULL REFERENCES nodes (id),
  reason       TEXT,
  requested_at BIGINT NOT NULL
);
CREATE INDEX reflection_requests_by_node ON reflection_requests (workflow_id, node_id);

CREATE TABLE efficiency (
  workflow_id        TEXT PRIMARY KEY REFERENCES workflows (id),
  tenant_id          TEXT NOT NULL,
  task_type          TEXT NOT NULL,
  complexity         TEXT NOT NULL CHECK (complexity IN ('trivial', 'simple', 'moderate', 'complex', 'critical')),
  outcome            TEXT NOT NULL CHECK (outcome IN ('success', 'partial', 'failure')),
  -- The record's completed_at.
  created_at         BIGINT NOT NULL,
  record             TEXT NOT NULL,
  efficiency_score   DOUBLE PRECISION NOT NULL DEFAULT 0,
  wall_time_seconds  DOUBLE PRECISION NOT NULL DEFAULT 0,
  retry_count        INTEGER NOT NULL DEFAULT 0,
  cost_usd           DOUBLE PRECISION NOT NULL DEFAULT 0,
  simulated_cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0
);
CREATE INDEX efficiency_by_tenant_time ON efficiency (tenant_id, created_at);
CREATE INDEX efficiency_by_tenant_type_time ON efficiency (tenant_id, task_type, created_at);
CREATE INDEX efficiency_by_tenant_complexity_time ON efficiency (tenant_id, complexity, created_at);

CREATE TABLE rewards (
  workflow_id       TEXT PRIMARY KEY REFERENCES workflows (id),
  tenant_id         TEXT NOT NULL,
  task_type         TEXT NOT NULL,
  complexity        TEXT NOT NULL CHECK (complexity IN ('trivial', 'simple', 'moderate', 'complex', 'critical')),
  outcome_reward    DOUBLE PRECISION NOT NULL,
  efficiency_reward DOUBLE PRECISION NOT NULL,
  -- NULL until feedback arrives.
  preference_reward DOUBLE PRECISION,
  aggregate_reward  DOUBLE PRECISION NOT NULL,
  created_at        BIGINT NOT NULL,
  updated_at        BIGINT NOT NULL
);
CREATE INDEX rewards_by_tenant_time ON rewards (tenant_id, created_at);
CREATE INDEX rewards_by_tenant_type ON rewards (tenant_id, task_type, complexity, created_at);

CREATE TABLE feedback (
  id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  workflow_id TEXT NOT NULL REFERENCES workflows (id),
  tenant_id   TEXT NOT NULL,
  -- JSON array of the seed's actions (commit, deploy, no_edits, revert, manual_fix, retry_different).
  actions     TEXT NOT NULL,
  note        TEXT,
  created_at  BIGINT NOT NULL
);
CREATE INDEX feedback_by_workflow ON feedback (workflow_id, id);

CREATE TABLE tool_calls (
  id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant_id    TEXT NOT NULL,
  workflow_id  TEXT NOT NULL,
  node_id      TEXT NOT NULL,
  tool         TEXT NOT NULL,
  agent        TEXT NOT NULL,
  model        TEXT NOT NULL,
  success      SMALLINT NOT NULL CHECK (success IN (0, 1)),
  latency_ms   INTEGER NOT NULL,
  result_bytes INTEGER NOT NULL,
  at           BIGINT NOT NULL
);
CREATE INDEX tool_calls_by_tenant_time ON tool_calls (tenant_id, at);
CREATE INDEX tool_calls_by_workflow ON tool_calls (workflow_id);

CREATE TABLE retrieval_runs (
  id                  BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant_id           TEXT NOT NULL,
  workflow_id         TEXT NOT NULL,
  node_id             TEXT NOT NULL,
  node_name           TEXT NOT NULL,
  task_type           TEXT NOT NULL,
  agent               TEXT NOT NULL,
  model               TEXT NOT NULL,
  corpus_id           TEXT NOT NULL,
  mode                TEXT NOT NULL CHECK (mode IN ('tools', 'json-actions')),
  retrieval_calls     INTEGER NOT NULL,
  steps               INTEGER NOT NULL,
  loop_exhausted      SMALLINT NOT NULL CHECK (loop_exhausted IN (0, 1)),
  halt_reason         TEXT NOT NULL CHECK (halt_reason IN ('finalized', 'budget_exhausted', 'error')),
  guard               TEXT NOT NULL CHECK (guard IN ('none', 'min_calls', 'auto')),
  guard_min_calls     INTEGER,
  guard_interventions INTEGER NOT NULL,
  relevant            SMALLINT CHECK (relevant IN (0, 1)),
  at                  BIGINT NOT NULL
);
CREATE INDEX retrieval_runs_by_tenant_time ON retrieval_runs (tenant_id, at);
CREATE INDEX retrieval_runs_by_tenant_type_time ON retrieval_runs (tenant_id, task_type, at);
CREATE INDEX retrieval_runs_by_workflow ON retrieval_runs (workflow_id);

-- The agents a root workflow's prompts use (registered or selected), written at submission.
CREATE TABLE agent_uses (
  workflow_id         TEXT NOT NULL REFERENCES workflows (id),
  node                TEXT NOT NULL,
  tenant_id           TEXT NOT NULL,
  agent               TEXT NOT NULL,
  version             INTEGER,
  -- NULL: the prompt named its agent.
  strategy            TEXT,
  role                TEXT,
  task_type           TEXT NOT NULL,
  complexity          TEXT NOT NULL CHECK (complexity IN ('trivial', 'simple', 'moderate', 'complex', 'critical')),
  scores              TEXT,
  created_at          BIGINT NOT NULL,
  reference           TEXT,
  saved_usd           DOUBLE PRECISION,
  saved_simulated_usd DOUBLE PRECISION,
  PRIMARY KEY (workflow_id, node)
);
CREATE INDEX agent_uses_by_agent ON agent_uses (tenant_id, task_type, complexity, agent);
CREATE INDEX agent_uses_by_strategy ON agent_uses (tenant_id, strategy) WHERE strategy IS NOT NULL;
CREATE INDEX agent_uses_recent_by_strategy ON agent_uses (tenant_id, task_type, strategy, created_at)
  WHERE strategy IS NOT NULL;

CREATE TABLE tenant_spend_days (
  tenant_id TEXT NOT NULL,
  day       INTEGER NOT NULL,
  cost_usd  DOUBLE PRECISION NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, day)
);
