-- Chunk text compressed (store/chunk-text.ts, chunk-codec.ts): corpus_chunks.text now holds the
-- chunk's UTF-8, LZ77-compressed, as a BLOB, not the TEXT itself (a corpus took ~1.9× its text on
-- disk, now ≤ 1.6×; docs/retrieval.md#retrieval-corpora). SQL cannot compress, so this migration rewrites no
-- row: the store reads both forms and compresses the rows written before it in the background,
-- 1 000 per commit, finding them through this index. New rows are BLOBs and never enter it; once
-- the old ones are rewritten it is empty.
CREATE INDEX corpus_chunks_legacy_text ON corpus_chunks (id) WHERE typeof(text) = 'text';
