-- The journal folded for people and tests, as the SQLite store's views of the same names do
-- (migrations/sqlite/0008): `events`, one row per event, and `spans`, one row per span as its
-- writes leave it (the first end of an open span closes it; later ends change nothing). The
-- service itself never reads them: it folds the journal in src/store/journal-codec.ts.
CREATE VIEW events AS
SELECT j.workflow_id AS workflow_id,
       (e.value ->> 0)::bigint AS seq,
       j.tenant_id AS tenant_id,
       e.value ->> 3 AS type,
       e.value ->> 1 AS node_id,
       (e.value ->> 2)::bigint AS at,
       e.value -> 4 AS payload
FROM journal j, json_array_elements(j.events::json) e
WHERE j.events IS NOT NULL;

CREATE VIEW spans AS
WITH writes AS (
  SELECT j.seq AS journal_seq, j.workflow_id, j.tenant_id, s.value::jsonb AS v,
         json_array_length(s.value) = 9 AS insert_write
  FROM journal j, json_array_elements(j.spans::json) s
  WHERE j.spans IS NOT NULL
),
ends AS (
  SELECT v ->> 0 AS span_id, v,
         row_number() OVER (PARTITION BY v ->> 0 ORDER BY journal_seq) AS nth
  FROM writes
  WHERE NOT insert_write
),
opened AS (
  SELECT w.workflow_id, w.tenant_id, w.v, e.v AS ending,
         (w.v ->> 6 IS NULL AND e.v IS NOT NULL) AS closed_later
  FROM writes w
  LEFT JOIN ends e ON e.span_id = w.v ->> 0 AND e.nth = 1
  WHERE w.insert_write
)
SELECT wf.trace_id AS trace_id,
       o.v ->> 0 AS span_id,
       o.workflow_id AS workflow_id,
       o.tenant_id AS tenant_id,
       o.v ->> 1 AS node_id,
       o.v ->> 2 AS parent_id,
       o.v ->> 3 AS type,
       (o.v ->> 4)::bigint AS started_at,
       (CASE WHEN o.closed_later THEN o.ending ->> 1 ELSE o.v ->> 5 END)::bigint AS ended_at,
       CASE WHEN o.closed_later THEN o.ending ->> 2 ELSE o.v ->> 6 END AS status,
       nullif(CASE WHEN o.closed_later THEN o.ending -> 3 ELSE o.v -> 7 END, 'null'::jsonb) AS error,
       CASE WHEN o.closed_later AND o.ending -> 4 <> 'null'::jsonb
            THEN (o.v -> 8) || (o.ending -> 4)
            ELSE o.v -> 8 END AS fields
FROM opened o
JOIN workflows wf ON wf.id = o.workflow_id;
