-- The figures GET /v1/metrics/efficiency averages over the whole filtered window (not one page),
-- as columns beside the record JSON, so the aggregate is one indexed GROUP BY. Real and simulated
-- money are kept apart (docs/design.md#providers-and-models): a by_model entry of a sim/* model is simulated.

ALTER TABLE efficiency ADD COLUMN efficiency_score REAL NOT NULL DEFAULT 0;
ALTER TABLE efficiency ADD COLUMN wall_time_seconds REAL NOT NULL DEFAULT 0;
ALTER TABLE efficiency ADD COLUMN retry_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE efficiency ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0;
ALTER TABLE efficiency ADD COLUMN simulated_cost_usd REAL NOT NULL DEFAULT 0;

UPDATE efficiency SET
  efficiency_score = json_extract(record, '$.efficiency_score'),
  wall_time_seconds = json_extract(record, '$.metrics.wall_time_seconds'),
  retry_count = json_extract(record, '$.metrics.retry_count'),
  cost_usd = (
    SELECT coalesce(sum(json_extract(m.value, '$.cost_usd')), 0) FROM json_each(record, '$.metrics.by_model') m
    WHERE NOT (m.key LIKE 'sim/%' OR json_extract(m.value, '$.simulated') IS 1)
  ),
  simulated_cost_usd = (
    SELECT coalesce(sum(json_extract(m.value, '$.cost_usd')), 0) FROM json_each(record, '$.metrics.by_model') m
    WHERE m.key LIKE 'sim/%' OR json_extract(m.value, '$.simulated') IS 1
  );
