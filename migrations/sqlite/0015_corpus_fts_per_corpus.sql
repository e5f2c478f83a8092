-- Ranking statistics per corpus (issue 17): one FTS5 table per corpus, `corpus_fts_<seq>`, created
-- with the corpus by store/corpus-index.ts (a table name cannot be a parameter, so no migration can
-- create them). The shared index of 0011 ranked a tenant's chunks with every tenant's document
-- frequencies and row lengths: another tenant's uploads changed scores and orders, and told which
-- words the others hold. The store rebuilds the per-corpus tables of existing corpora from
-- corpus_chunks (which keeps the text) when it starts after this migration.
DROP TABLE corpus_chunks_vocab;
DROP TABLE corpus_chunks_fts;
