-- The agent registry and agent selection (docs/design.md#workflow-definitions,
-- docs/design.md#complexity-allocation-selection-and-review, docs/design.md#http-api-conventions). Written by
-- store/agents.repo.ts and,
-- for agent_uses, with the workflow's own insert (one transaction). Times are epoch ms.
-- (0012 is left to another branch; migration versions only need to increase.)

-- Every version of every registered agent. A PUT adds version n + 1; a DELETE sets deleted_at on
-- every version of the name (retired: gone from the API, kept for the runs that used them); a new
-- POST of a retired name continues the numbering.
CREATE TABLE agents (
  tenant_id  TEXT NOT NULL,
  name       TEXT NOT NULL,
  version    INTEGER NOT NULL CHECK (version >= 1),
  role       TEXT CHECK (role IN ('planning', 'development', 'testing', 'review')),
  -- The AgentConfig JSON (src/domain/definition.ts), parsed back through zod.
  config     TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  deleted_at INTEGER,
  PRIMARY KEY (tenant_id, name, version)
) WITHOUT ROWID;

-- Which agent a workflow's prompt nodes used, for prompts naming a registered agent or selecting
-- one: the history selection scores by (the workflow's aggregate reward, per agent) and the
-- strategy comparison of GET /v1/analytics/selection.
CREATE TABLE agent_uses (
  workflow_id TEXT NOT NULL REFERENCES workflows (id),
  node        TEXT NOT NULL,
  tenant_id   TEXT NOT NULL,
  agent       TEXT NOT NULL,
  -- NULL: an agent of the definition.
  version     INTEGER,
  -- NULL: the prompt named its agent.
  strategy    TEXT CHECK (strategy IN ('greedy', 'thompson')),
  role        TEXT,
  task_type   TEXT NOT NULL,
  complexity  TEXT NOT NULL CHECK (complexity IN ('trivial', 'simple', 'moderate', 'complex', 'critical')),
  -- JSON object: candidate name → score, when selected.
  scores      TEXT,
  created_at  INTEGER NOT NULL,
  PRIMARY KEY (workflow_id, node)
) WITHOUT ROWID;
-- Selection: a candidate's past runs of one task type and complexity.
CREATE INDEX agent_uses_by_agent ON agent_uses (tenant_id, task_type, complexity, agent);
-- GET /v1/analytics/selection: the selecting uses of a tenant.
CREATE INDEX agent_uses_by_strategy ON agent_uses (tenant_id, strategy) WHERE strategy IS NOT NULL;
