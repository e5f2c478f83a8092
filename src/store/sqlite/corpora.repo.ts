import { MAX_CORPORA_PER_TENANT } from '../../domain/corpus.js';
import { NotFoundError } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import type { CorpusStore } from '../../domain/ports.js';
import {
  CORPUS_COLUMNS as COLUMNS,
  type CorpusRow,
  checkCorpusRoom,
  checkedCorpus,
  checkedLimit,
  checkSearch,
  nameTaken,
  prepareDocuments,
  tooManyCorpora,
  toCorpusRecord as toRecord,
} from '../corpus-rows.js';
import { decodeKeyset, encodeKeyset } from '../keyset.js';
import { queryTerms } from '../query-terms.js';
import { createBatchLoop } from './batch-loop.js';
import {
  buildMissingCorpusIndexes,
  corpusIndexTable,
  createCorpusIndex,
  dropCorpusIndex,
  hasCorpusIndex,
} from './corpus-index.js';
import type { Db } from './db.js';
import type { GroupCommitter } from './group-commit.js';
import { compressLegacyChunks } from './legacy-chunks.js';
import { createSearchRunner } from './search-runner.js';

/**
 * Corpora, their documents and chunks (migrations/sqlite/0011), and one FTS5 index per corpus
 * (corpus-index.ts, migrations/sqlite/0015); a chunk's text is stored compressed (store/chunk-text.ts,
 * migrations/sqlite/0023). Writes go through the group committer; a deleted corpus's rows are purged
 * afterwards in commits of PURGE_BATCH_CHUNKS chunks, so deleting a large corpus never holds the
 * event loop for long. Searches run off the event loop (search-runner.ts). The checks and the row
 * mapping are shared with the PostgreSQL store (store/corpus-rows.ts).
 */

/** Chunks removed per purge commit: a few tens of milliseconds of work each. */
const PURGE_BATCH_CHUNKS = 1_000;

export interface SqliteCorpusStore extends CorpusStore {
  /** Stops the background purge (deps.close, before the database closes); the rest resumes at the next start. */
  stop(): void;
  /** Stops the search workers (deps.close, before the database closes). */
  close(): Promise<void>;
}

export interface CorpusStoreOptions {
  now: () => number;
  /** A purge commit failed: it is retried with the next delete or at the next start. */
  onError: (err: unknown) => void;
  /** The database file searches open read-only in worker threads; `:memory:` or none: searched in-thread. */
  databasePath?: string | undefined;
  /** SEARCH_WORKERS (default 1). */
  searchWorkers?: number | undefined;
  /** SEARCH_CONCURRENCY_PER_TENANT (default 4). */
  searchConcurrencyPerTenant?: number | undefined;
}

export function createSqliteCorpusStore(
  db: Db,
  committer: GroupCommitter,
  options: CorpusStoreOptions,
): SqliteCorpusStore {
  const byId = db.prepare<[string, string], CorpusRow>(`SELECT ${COLUMNS} FROM corpora WHERE tenant_id = ? AND id = ?`);
  const byName = db.prepare<[string, string], CorpusRow>(
    `SELECT ${COLUMNS} FROM corpora WHERE tenant_id = ? AND name = ?`,
  );
  const countForTenant = db.prepare<[string], number>('SELECT count(*) FROM corpora WHERE tenant_id = ?').pluck();
  const insertCorpus = db.prepare<[string, string, string, string | null, number], CorpusRow>(
    `INSERT INTO corpora (id, tenant_id, name, description, created_at) VALUES (?, ?, ?, ?, ?) RETURNING ${COLUMNS}`,
  );
  const listFirst = db.prepare<[string, number], CorpusRow>(
    `SELECT ${COLUMNS} FROM corpora WHERE tenant_id = ? ORDER BY id DESC LIMIT ?`,
  );
  const listAfter = db.prepare<[string, string, number], CorpusRow>(
    `SELECT ${COLUMNS} FROM corpora WHERE tenant_id = ? AND id < ? ORDER BY id DESC LIMIT ?`,
  );
  const deleteCorpus = db.prepare<[number]>('DELETE FROM corpora WHERE seq = ?');
  const queuePurge = db.prepare<[number]>('INSERT OR IGNORE INTO corpus_purges (corpus_seq) VALUES (?)');
  const insertDocument = db.prepare<[string, number, string | null, string | null, number, number, number]>(
    `INSERT INTO corpus_documents (id, corpus_seq, title, metadata, bytes, chunk_count, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertChunk = db.prepare<[number, string, number, Buffer]>(
    'INSERT INTO corpus_chunks (corpus_seq, document_id, position, text) VALUES (?, ?, ?, ?)',
  );
  const addCounts = db.prepare<[number, number, number, number], CorpusRow>(
    `UPDATE corpora SET document_count = document_count + ?, chunk_count = chunk_count + ?, bytes = bytes + ?
     WHERE seq = ? RETURNING ${COLUMNS}`,
  );
  const nextPurge = db.prepare<[], number>('SELECT corpus_seq FROM corpus_purges LIMIT 1').pluck();
  const purgeChunkIds = db
    .prepare<[number, number], number>('SELECT id FROM corpus_chunks WHERE corpus_seq = ? ORDER BY id LIMIT ?')
    .pluck();
  const deleteChunksUpTo = db.prepare<[number, number]>('DELETE FROM corpus_chunks WHERE corpus_seq = ? AND id <= ?');
  const deleteDocuments = db.prepare<[number]>('DELETE FROM corpus_documents WHERE corpus_seq = ?');
  const purgeDone = db.prepare<[number]>('DELETE FROM corpus_purges WHERE corpus_seq = ?');

  const find = (tenantId: string, idOrName: string): CorpusRow | undefined =>
    idOrName.startsWith('cp_') ? byId.get(tenantId, idOrName) : byName.get(tenantId, idOrName);

  /** One purge commit: up to PURGE_BATCH_CHUNKS chunks of one deleted corpus. True while work remains. */
  const purgeStep = (): boolean => {
    const seq = nextPurge.get();
    if (seq === undefined) return false;
    const ids = purgeChunkIds.all(seq, PURGE_BATCH_CHUNKS);
    if (ids.length > 0 && hasCorpusIndex(db, seq)) {
      const unindex = db.prepare<[number]>(`DELETE FROM ${corpusIndexTable(seq)} WHERE rowid = ?`);
      for (const id of ids) unindex.run(id);
    }
    const last = ids.at(-1);
    if (last !== undefined) deleteChunksUpTo.run(seq, last);
    if (ids.length < PURGE_BATCH_CHUNKS) {
      // Emptied by the batches before: dropping it frees a few pages only.
      dropCorpusIndex(db, seq);
      deleteDocuments.run(seq);
      purgeDone.run(seq);
      return nextPurge.get() !== undefined;
    }
    return true;
  };

  const purges = createBatchLoop(committer, purgeStep, options.onError);
  const purge = (): void => purges.kick();
  const legacy = createBatchLoop(committer, () => compressLegacyChunks(db), options.onError);
  // The first start after migrations/sqlite/0015 indexes the existing corpora; purges a crash or a
  // shutdown interrupted resume.
  buildMissingCorpusIndexes(db);
  if (nextPurge.get() !== undefined) purge();
  // Rows written before migrations/sqlite/0023 hold their text as it was; they are read as they are
  // meanwhile, so this runs in the background.
  legacy.kick();
  const searches = createSearchRunner(db, {
    databasePath: options.databasePath,
    workers: options.searchWorkers ?? 1,
    perTenant: options.searchConcurrencyPerTenant ?? 4,
    busyTimeoutMs: 100,
  });

  return {
    async create(tenantId, corpus) {
      const { name, description } = checkedCorpus(corpus);
      const id = newId('cp');
      const createdAt = options.now();
      const row = await committer.run(() => {
        if ((countForTenant.get(tenantId) ?? 0) >= MAX_CORPORA_PER_TENANT) throw tooManyCorpora();
        if (byName.get(tenantId, name) !== undefined) throw nameTaken(name);
        const created = insertCorpus.get(id, tenantId, name, description, createdAt) as CorpusRow;
        createCorpusIndex(db, created.seq);
        return created;
      });
      return toRecord(row);
    },

    async list(tenantId, { cursor, limit }) {
      checkedLimit(limit);
      const rows =
        cursor === null
          ? listFirst.all(tenantId, limit + 1)
          : listAfter.all(tenantId, String(decodeKeyset(cursor, ['string'])[0]), limit + 1);
      const more = rows.length > limit;
      const items = (more ? rows.slice(0, limit) : rows).map(toRecord);
      const last = items.at(-1);
      return { items, nextCursor: more && last !== undefined ? encodeKeyset([last.id]) : null };
    },

    async get(tenantId, idOrName) {
      const row = find(tenantId, idOrName);
      return row === undefined ? undefined : toRecord(row);
    },

    async delete(tenantId, id) {
      const removed = await committer.run(() => {
        const row = byId.get(tenantId, id);
        if (row === undefined) return false;
        deleteCorpus.run(row.seq);
        queuePurge.run(row.seq);
        return true;
      });
      if (removed) purge();
      return removed;
    },

    async addDocuments(tenantId, corpusId, documents) {
      const { prepared, bytes, chunkCount } = prepareDocuments(documents);
      const createdAt = options.now();

      const row = await committer.run(() => {
        const corpus = byId.get(tenantId, corpusId);
        if (corpus === undefined) throw new NotFoundError(`corpus ${corpusId}`);
        checkCorpusRoom(corpus, prepared.length, bytes);
        const indexChunk = db.prepare<[number | bigint, string]>(
          `INSERT INTO ${corpusIndexTable(corpus.seq)} (rowid, text) VALUES (?, ?)`,
        );
        for (const document of prepared) {
          insertDocument.run(
            document.id,
            corpus.seq,
            document.title,
            document.metadata,
            document.size,
            document.chunks.length,
            createdAt,
          );
          document.chunks.forEach((text, position) => {
            const packed = document.packed[position] as Buffer;
            const { lastInsertRowid } = insertChunk.run(corpus.seq, document.id, position, packed);
            indexChunk.run(lastInsertRowid, text);
          });
        }
        return addCounts.get(prepared.length, chunkCount, bytes, corpus.seq) as CorpusRow;
      });
      return { documentIds: prepared.map((d) => d.id), chunks: chunkCount, corpus: toRecord(row) };
    },

    async search(tenantId, corpusId, query, k) {
      checkSearch(query, k);
      const corpus = byId.get(tenantId, corpusId);
      if (corpus === undefined) throw new NotFoundError(`corpus ${corpusId}`);
      const terms = queryTerms(query);
      if (terms.length === 0) return [];
      const hits = await searches.search({ tenantId, corpusSeq: corpus.seq, terms, k });
      // Deleted between the lookup and the search.
      if (hits === undefined) throw new NotFoundError(`corpus ${corpusId}`);
      return hits;
    },

    stop() {
      purges.stop();
      legacy.stop();
    },

    close: () => searches.close(),
  };
}
