-- Retrieval corpora (docs/design.md#agent-tools, docs/design.md#storage): a tenant's documents, chunked, searched
-- with FTS5 BM25.
-- Written by store/corpora.repo.ts only. Times are epoch ms.

-- `seq` is the internal key the documents, chunks and the FTS index refer to. AUTOINCREMENT, so a
-- seq is never reused: the chunks of a deleted corpus still being purged can never be taken for
-- those of a corpus created after it (same name included).
CREATE TABLE corpora (
  seq            INTEGER PRIMARY KEY AUTOINCREMENT,
  id             TEXT NOT NULL UNIQUE,
  tenant_id      TEXT NOT NULL,
  name           TEXT NOT NULL,
  description    TEXT,
  document_count INTEGER NOT NULL DEFAULT 0,
  chunk_count    INTEGER NOT NULL DEFAULT 0,
  bytes          INTEGER NOT NULL DEFAULT 0,
  created_at     INTEGER NOT NULL
);
-- Names are unique per tenant; lookups by name.
CREATE UNIQUE INDEX corpora_by_tenant_name ON corpora (tenant_id, name);
-- GET /v1/corpora: a tenant's corpora newest first (ids are time-ordered), keyset paged.
CREATE INDEX corpora_by_tenant_id ON corpora (tenant_id, id);

-- No foreign key to corpora: deleting a corpus removes its row at once and leaves its documents
-- and chunks to the purge (corpus_purges), which removes them in small commits.
CREATE TABLE corpus_documents (
  id          TEXT PRIMARY KEY,
  corpus_seq  INTEGER NOT NULL,
  title       TEXT,
  metadata    TEXT,
  bytes       INTEGER NOT NULL,
  chunk_count INTEGER NOT NULL,
  created_at  INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX corpus_documents_by_corpus ON corpus_documents (corpus_seq);

-- The chunk text lives here; its rowid is the FTS row's rowid.
CREATE TABLE corpus_chunks (
  id          INTEGER PRIMARY KEY,
  corpus_seq  INTEGER NOT NULL,
  document_id TEXT NOT NULL REFERENCES corpus_documents (id),
  position    INTEGER NOT NULL,
  text        TEXT NOT NULL
);
-- The purge takes a corpus's chunks in batches.
CREATE INDEX corpus_chunks_by_corpus ON corpus_chunks (corpus_seq, id);
-- One chunk per position; also serves the foreign key check when documents are purged.
CREATE UNIQUE INDEX corpus_chunks_by_document ON corpus_chunks (document_id, position);

-- The index over the chunks. Contentless (the text is in corpus_chunks, not stored twice) with
-- contentless_delete=1 (SQLite ≥ 3.43), so a chunk leaves the index by rowid without its text
-- being tokenized again. `corpus` holds one token, 'c' || corpus_seq: a search ANDs it into the
-- MATCH expression, so FTS5 ranks only that corpus's rows (not every tenant's), and bm25 gives
-- that column weight 0 (the rank configured below). porter + unicode61: English stemming ("runs"
-- finds "running") over Unicode-aware, case- and diacritic-folding word splitting.
CREATE VIRTUAL TABLE corpus_chunks_fts USING fts5(
  corpus,
  text,
  content = '',
  contentless_delete = 1,
  tokenize = 'porter unicode61'
);
INSERT INTO corpus_chunks_fts (corpus_chunks_fts, rank) VALUES ('rank', 'bm25(0.0, 1.0)');
-- How many rows hold each indexed term (the index's own statistics, nothing stored): a search
-- leaves out the terms BM25 gives no weight to (in half the rows or more) before it ranks.
CREATE VIRTUAL TABLE corpus_chunks_vocab USING fts5vocab(corpus_chunks_fts, 'row');

-- Deleted corpora whose documents and chunks are still to be removed.
CREATE TABLE corpus_purges (
  corpus_seq INTEGER PRIMARY KEY
);
