-- Tool analytics and retrieval engagement (docs/design.md#agent-tools). Both are written by the engine in the
-- transaction of the node they belong to (ChangeSet.toolCalls / ChangeSet.retrievalRuns), so a
-- crash never leaves a call counted without its node, or the reverse. Times are epoch ms.

-- One row per tool call a model made (refused and invalid calls included: they are what a
-- description audit and an engagement guard are judged by).
CREATE TABLE tool_calls (
  id           INTEGER PRIMARY KEY,
  tenant_id    TEXT NOT NULL,
  workflow_id  TEXT NOT NULL,
  node_id      TEXT NOT NULL,
  tool         TEXT NOT NULL,
  agent        TEXT NOT NULL,
  model        TEXT NOT NULL,
  success      INTEGER NOT NULL CHECK (success IN (0, 1)),
  latency_ms   INTEGER NOT NULL,
  result_bytes INTEGER NOT NULL,
  at           INTEGER NOT NULL
);
-- GET /v1/analytics/tools: a tenant's calls in a time range, grouped by tool and model.
CREATE INDEX tool_calls_by_tenant_time ON tool_calls (tenant_id, at);

-- One row per prompt run with `retrieval` (an attempt of the node): how the model engaged.
CREATE TABLE retrieval_runs (
  id                  INTEGER PRIMARY KEY,
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
  loop_exhausted      INTEGER NOT NULL CHECK (loop_exhausted IN (0, 1)),
  halt_reason         TEXT NOT NULL CHECK (halt_reason IN ('finalized', 'budget_exhausted', 'error')),
  -- The guard that applied to this run: none, a fixed minCalls, or auto (then its minCalls).
  guard               TEXT NOT NULL CHECK (guard IN ('none', 'min_calls', 'auto')),
  guard_min_calls     INTEGER,
  guard_interventions INTEGER NOT NULL,
  -- memory_retrieval_relevant of this run (docs/design.md#agent-tools): 1, 0, or NULL when nothing was retrieved.
  relevant            INTEGER CHECK (relevant IN (0, 1)),
  at                  INTEGER NOT NULL
);
-- GET /v1/analytics/retrieval and the auto guard: a tenant's runs in a time range, by task type.
CREATE INDEX retrieval_runs_by_tenant_type_time ON retrieval_runs (tenant_id, task_type, at);
CREATE INDEX retrieval_runs_by_tenant_time ON retrieval_runs (tenant_id, at);
