-- A workflow's complexity and allocation (domain/allocation.ts Routing), settled once when it is
-- planned and stored with it as JSON, so a run resumed elsewhere or later reads the same routing
-- instead of classifying its definition again. NULL for rows written before this migration: their
-- run settles it from the definition, as every run did before.
ALTER TABLE workflows ADD COLUMN routing TEXT;
