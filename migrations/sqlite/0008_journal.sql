-- The journal (docs/design.md#storage, src/store/journal.repo.ts): the durable record of events and spans.
-- Each commit appends one row per workflow it touches, with that commit's events and span writes as
-- JSON arrays. The rowid orders rows, so commits append to the right edge of one B-tree instead of
-- dirtying pages of the events and spans B-trees of every workflow in flight (bench/write-pattern.ts).
--
--   events:     [[seq, nodeId, at, type, payload], …]                 in seq order
--   spans:      [[spanId, nodeId, parentId, type, startedAt, endedAt, status, error, fields]   an insert
--                | [spanId, endedAt, status, error, fields|null], …]  the end of a span inserted earlier
-- (positional arrays: keys would be a third of the bytes; src/store/journal.repo.ts has their schemas)
--   last_event: the highest event seq in the row (NULL when it has none), so a reader skips rows.
--   calls … simulated_cost_usd: what the row's generation spans add to the workflow's usage (provider
--     calls started, tokens and money spent, simulated money apart), so the totals of a workflow
--     view are a SUM, not a read of every span (src/engine/span-recorder.ts counts them).
--
-- No foreign key on workflow_id: only the engine writes here, in the transaction of its workflow's
-- changes, and the check would cost on every commit.
CREATE TABLE journal (
  seq         INTEGER PRIMARY KEY,
  workflow_id TEXT NOT NULL,
  tenant_id   TEXT NOT NULL,
  last_event  INTEGER,
  events      TEXT,
  spans       TEXT,
  calls              INTEGER NOT NULL DEFAULT 0,
  tokens_in          INTEGER NOT NULL DEFAULT 0,
  tokens_out         INTEGER NOT NULL DEFAULT 0,
  cost_usd           REAL NOT NULL DEFAULT 0,
  simulated_cost_usd REAL NOT NULL DEFAULT 0
);
CREATE INDEX journal_by_workflow ON journal (workflow_id, seq);

-- A trace's child workflows by their root (trace reads, span counts); roots are found by id.
CREATE INDEX workflows_by_root ON workflows (root_workflow_id, id) WHERE parent_workflow_id IS NOT NULL;

-- What the old tables held moves over: one row per workflow for its events, one for its spans.
INSERT INTO journal (workflow_id, tenant_id, last_event, events)
SELECT workflow_id, tenant_id, max(seq),
       json_group_array(json_array(seq, node_id, at, type, json(payload)))
FROM (SELECT * FROM events ORDER BY workflow_id, seq)
GROUP BY workflow_id;

-- Spans written before the `simulated` flag existed name their model only.
INSERT INTO journal (workflow_id, tenant_id, spans, calls, tokens_in, tokens_out, cost_usd, simulated_cost_usd)
SELECT workflow_id, tenant_id,
       json_group_array(json_array(
         span_id, node_id, parent_id, type, started_at, ended_at, status, json(error), json(fields))),
       coalesce(sum(generation AND fields ->> '$.cache_hit' = 0), 0),
       coalesce(sum(CASE WHEN generation THEN fields ->> '$.tokens_in' END), 0),
       coalesce(sum(CASE WHEN generation THEN fields ->> '$.tokens_out' END), 0),
       coalesce(sum(CASE WHEN generation AND NOT simulated THEN fields ->> '$.cost_usd' END), 0),
       coalesce(sum(CASE WHEN generation AND simulated THEN fields ->> '$.cost_usd' END), 0)
FROM (
  SELECT *, type = 'generation_span' AS generation,
         (fields ->> '$.simulated' IS 1 OR fields ->> '$.model' LIKE 'sim/%') AS simulated
  FROM spans ORDER BY workflow_id, span_id
)
GROUP BY workflow_id;

DROP INDEX spans_open_by_workflow;
DROP TABLE spans;
DROP TABLE events;

-- The old tables' shapes, as read-only views of the journal for SQL users (the service reads the
-- journal directly). They scan it: fine for a look at a database, not for a report over millions.
CREATE VIEW events AS
SELECT j.workflow_id AS workflow_id,
       e.value ->> '$[0]' AS seq,
       j.tenant_id AS tenant_id,
       e.value ->> '$[3]' AS type,
       e.value ->> '$[1]' AS node_id,
       e.value ->> '$[2]' AS at,
       e.value -> '$[4]' AS payload
FROM journal j, json_each(j.events) e
WHERE j.events IS NOT NULL;

-- A span is its insert, closed by the first end written after it (later ends are ignored, as in
-- the service's own fold). Fields an end carries replace the insert's keys of the same name.
CREATE VIEW spans AS
WITH writes AS (
  SELECT j.seq AS journal_seq, j.workflow_id, j.tenant_id, s.value AS v, json_array_length(s.value) = 9 AS insert_write
  FROM journal j, json_each(j.spans) s
  WHERE j.spans IS NOT NULL
),
ends AS (
  SELECT v ->> '$[0]' AS span_id, v,
         row_number() OVER (PARTITION BY v ->> '$[0]' ORDER BY journal_seq) AS nth
  FROM writes
  WHERE NOT insert_write
),
opened AS (
  SELECT w.workflow_id, w.tenant_id, w.v, e.v AS ending,
         (w.v ->> '$[6]' IS NULL AND e.v IS NOT NULL) AS closed_later
  FROM writes w
  LEFT JOIN ends e ON e.span_id = w.v ->> '$[0]' AND e.nth = 1
  WHERE w.insert_write
)
SELECT wf.trace_id AS trace_id,
       o.v ->> '$[0]' AS span_id,
       o.workflow_id AS workflow_id,
       o.tenant_id AS tenant_id,
       o.v ->> '$[1]' AS node_id,
       o.v ->> '$[2]' AS parent_id,
       o.v ->> '$[3]' AS type,
       o.v ->> '$[4]' AS started_at,
       CASE WHEN o.closed_later THEN o.ending ->> '$[1]' ELSE o.v ->> '$[5]' END AS ended_at,
       CASE WHEN o.closed_later THEN o.ending ->> '$[2]' ELSE o.v ->> '$[6]' END AS status,
       nullif(CASE WHEN o.closed_later THEN o.ending -> '$[3]' ELSE o.v -> '$[7]' END, 'null') AS error,
       CASE WHEN o.closed_later AND o.ending ->> '$[4]' IS NOT NULL
            THEN json_patch(o.v -> '$[8]', o.ending -> '$[4]')
            ELSE o.v -> '$[8]' END AS fields
FROM opened o
JOIN workflows wf ON wf.id = o.workflow_id;
