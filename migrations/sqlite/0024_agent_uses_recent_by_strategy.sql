-- `strategy: "auto"` (src/metrics/auto-strategy.ts; docs/workflows.md#agent-selection): each selection reads
-- the newest selecting uses of one tenant, task type and strategy, at most AUTO_WINDOW_USES of
-- them. This index serves that read newest first, so its cost is bounded by the window, not by the
-- tenant's history.
CREATE INDEX agent_uses_recent_by_strategy ON agent_uses (tenant_id, task_type, strategy, created_at)
  WHERE strategy IS NOT NULL;
