-- Retrieval corpora on PostgreSQL (store/postgres/corpora.ts): the tables of the SQLite store
-- (migrations/sqlite/0011, 0015, 0023) with the same columns, plus what BM25 needs, since PostgreSQL
-- has no BM25 and SQLite's FTS5 tables have no counterpart here. Each chunk keeps its terms (as
-- FTS5's `porter unicode61` reads them: store/postgres/fts5-tokens.ts) with their counts and its
-- length in tokens; each corpus its total tokens and, per term, how many of its chunks hold it. From
-- those the store scores exactly FTS5's bm25() (store/postgres/corpus-search.ts). Every statistic is
-- the corpus's own, as with SQLite's table per corpus: term ids belong to one corpus, so the index
-- of one never finds another's chunks. Times are epoch ms.

-- `seq` is never reused (an identity), so the rows of a deleted corpus still being purged can never
-- be taken for those of a corpus created after it (same name included).
CREATE TABLE corpora (
  seq            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id             TEXT NOT NULL UNIQUE,
  tenant_id      TEXT NOT NULL,
  name           TEXT NOT NULL,
  description    TEXT,
  document_count INTEGER NOT NULL DEFAULT 0,
  chunk_count    INTEGER NOT NULL DEFAULT 0,
  bytes          BIGINT NOT NULL DEFAULT 0,
  created_at     BIGINT NOT NULL,
  -- PostgreSQL only: tokens of all its chunks (BM25's average chunk length is tokens / chunk_count).
  tokens         BIGINT NOT NULL DEFAULT 0
);
-- Names are unique per tenant (two instances creating one name: one wins, the other is a CONFLICT).
CREATE UNIQUE INDEX corpora_by_tenant_name ON corpora (tenant_id, name);
-- GET /v1/corpora: a tenant's corpora newest first (ids are time-ordered), keyset paged.
CREATE INDEX corpora_by_tenant_id ON corpora (tenant_id, id);

-- No foreign key to corpora: deleting a corpus removes its row at once and leaves its documents,
-- chunks and terms to the purge (corpus_purges), which removes them in small commits.
CREATE TABLE corpus_documents (
  id          TEXT PRIMARY KEY,
  corpus_seq  BIGINT NOT NULL,
  title       TEXT,
  metadata    TEXT,
  bytes       INTEGER NOT NULL,
  chunk_count INTEGER NOT NULL,
  created_at  BIGINT NOT NULL
);
CREATE INDEX corpus_documents_by_corpus ON corpus_documents (corpus_seq);

CREATE TABLE corpus_chunks (
  id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  corpus_seq  BIGINT NOT NULL,
  document_id TEXT NOT NULL REFERENCES corpus_documents (id),
  position    INTEGER NOT NULL,
  -- Compressed as in SQLite (store/chunk-text.ts).
  text        BYTEA NOT NULL,
  -- PostgreSQL only: the chunk's length in tokens, its distinct terms (corpus_terms.id) and how
  -- often each occurs, position for position.
  tokens      INTEGER NOT NULL,
  term_ids    BIGINT[] NOT NULL,
  term_counts INTEGER[] NOT NULL
);
-- The purge takes a corpus's chunks in batches.
CREATE INDEX corpus_chunks_by_corpus ON corpus_chunks (corpus_seq, id);
-- One chunk per position; also serves the foreign key check when documents are purged.
CREATE UNIQUE INDEX corpus_chunks_by_document ON corpus_chunks (document_id, position);
-- The chunks holding any of a search's terms.
CREATE INDEX corpus_chunks_by_term ON corpus_chunks USING gin (term_ids);

-- PostgreSQL only: a corpus's terms, each with the number of its chunks that hold it (BM25's
-- document frequency, kept as documents are added). A term longer than 200 bytes is keyed by its
-- SHA-256 (`#` + hex; no term holds a `#`), so a long run of letters never outgrows a B-tree entry.
CREATE TABLE corpus_terms (
  corpus_seq BIGINT NOT NULL,
  term       TEXT COLLATE "C" NOT NULL,
  id         BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  chunks     INTEGER NOT NULL,
  PRIMARY KEY (corpus_seq, term)
);

-- Deleted corpora whose documents, chunks and terms are still to be removed.
CREATE TABLE corpus_purges (
  corpus_seq BIGINT PRIMARY KEY
);
