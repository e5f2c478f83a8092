-- Tracing spans (docs/design.md#events-spans-metrics-and-rewards, docs/design.md#storage). One row per span, written
-- in the same transaction as the node it
-- belongs to. Span ids are time-ordered (`span_` + 24 hex), so the clustered key makes inserts
-- append-mostly and `ORDER BY span_id` is creation order. A span is open while `status` (and
-- `ended_at`) is NULL; it is closed once. `error` ({code, message}) and `fields` (the type's fields,
-- snake_case) are JSON TEXT, parsed back through zod (src/domain/spans.ts).

-- Clustered by (trace_id, span_id): a trace reads as one range in creation order, with no second
-- index to maintain on the executor's hot path. No foreign key on workflow_id: spans are written only
-- by the engine, in the same transaction as their workflow's changes, and the check cost ~25% of
-- every span insert (measured with bench/spans.ts).
CREATE TABLE spans (
  trace_id    TEXT NOT NULL,
  span_id     TEXT NOT NULL,
  workflow_id TEXT NOT NULL,
  tenant_id   TEXT NOT NULL,
  node_id     TEXT,
  parent_id   TEXT,
  type        TEXT NOT NULL CHECK (type IN (
                'agent_span', 'generation_span', 'function_span', 'guardrail_span', 'handoff_span', 'custom_span')),
  started_at  INTEGER NOT NULL,
  ended_at    INTEGER,
  status      TEXT CHECK (status IN ('ok', 'error', 'interrupted')),
  error       TEXT,
  fields      TEXT NOT NULL,
  CHECK ((ended_at IS NULL) = (status IS NULL)),
  PRIMARY KEY (trace_id, span_id)
) WITHOUT ROWID;
-- Open spans of a workflow, closed as `interrupted` on resume and at shutdown. Small: only open rows.
CREATE INDEX spans_open_by_workflow ON spans (workflow_id) WHERE status IS NULL;

-- The trace list (GET /v1/traces) pages through root workflows, newest first per tenant; the
-- queries repeat `parent_workflow_id IS NULL` so the planner can use these partial indexes.
CREATE INDEX workflows_roots_by_tenant ON workflows (tenant_id, id) WHERE parent_workflow_id IS NULL;
-- A trace's root by trace id (GET /v1/traces/{traceId}).
CREATE INDEX workflows_root_by_trace ON workflows (trace_id, tenant_id) WHERE parent_workflow_id IS NULL;
