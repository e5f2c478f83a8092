-- The cache keys of a node's generations (docs/design.md#caching: "the node output carries the keys of its
-- generations"), as a JSON array; NULL for nodes that made no cacheable call.
ALTER TABLE nodes ADD COLUMN cache_keys TEXT;
