-- Cost-aware selection and its counterfactual savings (docs/workflows.md#cost-aware-selection,
-- docs/workflows.md#counterfactual-savings). Each selecting use records the best-quality candidate
-- it was compared against and the expected cost per run saved against it, real and simulated money
-- apart (NULL: unknown). Strategies are validated where they are defined (domain/agent-selection.ts),
-- not by a CHECK listing them, so `cost_aware` (and any later strategy) needs no rebuild; SQLite
-- cannot drop a CHECK in place, so the table is rebuilt as in 0026. No table references agent_uses.
CREATE TABLE agent_uses_any_strategy (
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
  created_at          INTEGER NOT NULL,
  reference           TEXT,
  saved_usd           REAL,
  saved_simulated_usd REAL,
  PRIMARY KEY (workflow_id, node)
) WITHOUT ROWID;

INSERT INTO agent_uses_any_strategy (workflow_id, node, tenant_id, agent, version, strategy, role, task_type,
  complexity, scores, created_at)
SELECT workflow_id, node, tenant_id, agent, version, strategy, role, task_type, complexity, scores, created_at
  FROM agent_uses;
DROP TABLE agent_uses;
ALTER TABLE agent_uses_any_strategy RENAME TO agent_uses;

CREATE INDEX agent_uses_by_agent ON agent_uses (tenant_id, task_type, complexity, agent);
CREATE INDEX agent_uses_by_strategy ON agent_uses (tenant_id, strategy) WHERE strategy IS NOT NULL;
CREATE INDEX agent_uses_recent_by_strategy ON agent_uses (tenant_id, task_type, strategy, created_at)
  WHERE strategy IS NOT NULL;
