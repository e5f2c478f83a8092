import type pg from 'pg';
import { MAX_CORPORA_PER_TENANT } from '../../domain/corpus.js';
import { AppError, NotFoundError, ValidationError } from '../../domain/errors.js';
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
import { searchCorpus } from './corpus-search.js';
import { indexDocuments, insertChunks, insertDocuments, upsertTerms } from './corpus-writes.js';
import { createPurgeLoop } from './purge-loop.js';
import { inTransaction } from './transaction.js';

/**
 * The CorpusStore on PostgreSQL (migrations/postgres/0010): what the SQLite store does
 * (store/sqlite/corpora.repo.ts), with the same checks and row mapping (store/corpus-rows.ts), for
 * several instances over one database:
 *
 * - create: a tenant's corpora are counted and inserted under a transaction-level advisory lock of
 *   that tenant, so instances creating at once never pass MAX_CORPORA_PER_TENANT; a name taken
 *   meanwhile is the unique index's violation, answered CONFLICT.
 * - addDocuments: one transaction holding the corpus row's lock (limits checked against committed
 *   counts, a delete waits or wins); the terms' chunk counts upserted in term order, documents and
 *   chunks inserted by `unnest` in a few statements of many rows.
 * - delete: the row goes at once; documents, chunks and terms are purged afterwards, a batch per
 *   commit, by whichever instance takes the purge row (`SKIP LOCKED`).
 * - search: BM25 as FTS5 scores it (corpus-search.ts), in one read-only REPEATABLE READ transaction
 *   with a statement timeout, so a delete meanwhile is either wholly seen or not at all.
 */

/** Chunks (and terms) removed per purge commit. */
const PURGE_BATCH = 1_000;
/** Key space of the tenant locks (pg_advisory_xact_lock(int, int)): "corp". */
const TENANT_LOCK_CLASS = 0x636f7270;
const UNIQUE_VIOLATION = '23505';
/** What a statement ended by statement_timeout fails with. */
const QUERY_CANCELED = '57014';
/** PostgreSQL text holds no U+0000: an id or a name with one names no corpus. */
const hasNul = (value: string): boolean => value.includes('\u0000');

export interface PostgresCorpusStore extends CorpusStore {
  /** Stops the background purge; the rest resumes at the next start (on any instance). */
  stop(): Promise<void>;
  /** Runs the purge of deleted corpora now (a cluster cron's tick), unless it runs already. */
  purgeNow(): void;
}

export interface PostgresCorpusStoreOptions {
  now: () => number;
  /** A purge commit failed: it is retried with the next delete or at the next start. */
  onError: (err: unknown) => void;
  /** SEARCH_CONCURRENCY_PER_TENANT (default 4): searches one tenant may have running in this instance. */
  searchConcurrencyPerTenant?: number | undefined;
  /** A search still running after this is cancelled by the server (default 5 000 ms). */
  searchTimeoutMs?: number | undefined;
}

/** How long a refused client is told to wait. */
const BUSY_RETRY_AFTER_MS = 1_000;

export function createPostgresCorpusStore(pool: pg.Pool, options: PostgresCorpusStoreOptions): PostgresCorpusStore {
  const perTenant = options.searchConcurrencyPerTenant ?? 4;
  const searchTimeoutMs = Math.max(1, Math.floor(options.searchTimeoutMs ?? 5_000));
  const running = new Map<string, number>();
  const admit = (tenantId: string): (() => void) => {
    const count = running.get(tenantId) ?? 0;
    if (count >= perTenant) {
      throw new AppError(
        'RATE_LIMITED',
        `${count} searches of this tenant are running (SEARCH_CONCURRENCY_PER_TENANT); retry shortly`,
        { retryAfterMs: BUSY_RETRY_AFTER_MS },
      );
    }
    running.set(tenantId, count + 1);
    return () => {
      const left = (running.get(tenantId) ?? 1) - 1;
      if (left > 0) running.set(tenantId, left);
      else running.delete(tenantId);
    };
  };

  const byId = async (client: pg.ClientBase, tenantId: string, id: string, lock = false) =>
    (
      await client.query<CorpusRow>(
        `SELECT ${COLUMNS} FROM corpora WHERE tenant_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`,
        [tenantId, id],
      )
    ).rows[0];

  const purges = createPurgeLoop(pool, PURGE_BATCH, options.onError);
  purges.kick();

  return {
    async create(tenantId, corpus) {
      const { name, description } = checkedCorpus(corpus);
      if (description !== null && hasNul(description)) {
        throw new ValidationError('description: must not contain U+0000', [
          { path: 'description', message: 'must not contain U+0000 (PostgreSQL text cannot hold it)' },
        ]);
      }
      const id = newId('cp');
      const createdAt = options.now();
      try {
        const row = await inTransaction(pool, async (client) => {
          await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [TENANT_LOCK_CLASS, tenantId]);
          const { rows } = await client.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM corpora WHERE tenant_id = $1',
            [tenantId],
          );
          if ((rows[0]?.n ?? 0) >= MAX_CORPORA_PER_TENANT) throw tooManyCorpora();
          const inserted = await client.query<CorpusRow>(
            `INSERT INTO corpora (id, tenant_id, name, description, created_at) VALUES ($1, $2, $3, $4, $5)
             RETURNING ${COLUMNS}`,
            [id, tenantId, name, description, createdAt],
          );
          return inserted.rows[0] as CorpusRow;
        });
        return toRecord(row);
      } catch (err) {
        if ((err as { code?: string }).code === UNIQUE_VIOLATION) throw nameTaken(name);
        throw err;
      }
    },

    async list(tenantId, { cursor, limit }) {
      checkedLimit(limit);
      const { rows } =
        cursor === null
          ? await pool.query<CorpusRow>(
              `SELECT ${COLUMNS} FROM corpora WHERE tenant_id = $1 ORDER BY id DESC LIMIT $2`,
              [tenantId, limit + 1],
            )
          : await pool.query<CorpusRow>(
              `SELECT ${COLUMNS} FROM corpora WHERE tenant_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3`,
              [tenantId, String(decodeKeyset(cursor, ['string'])[0]), limit + 1],
            );
      const more = rows.length > limit;
      const items = (more ? rows.slice(0, limit) : rows).map(toRecord);
      const last = items.at(-1);
      return { items, nextCursor: more && last !== undefined ? encodeKeyset([last.id]) : null };
    },

    async get(tenantId, idOrName) {
      if (hasNul(idOrName)) return undefined;
      const column = idOrName.startsWith('cp_') ? 'id' : 'name';
      const { rows } = await pool.query<CorpusRow>(
        `SELECT ${COLUMNS} FROM corpora WHERE tenant_id = $1 AND ${column} = $2`,
        [tenantId, idOrName],
      );
      const row = rows[0];
      return row === undefined ? undefined : toRecord(row);
    },

    async delete(tenantId, id) {
      if (hasNul(id)) return false;
      const removed = await inTransaction(pool, async (client) => {
        const { rows } = await client.query<{ seq: number }>(
          'DELETE FROM corpora WHERE tenant_id = $1 AND id = $2 RETURNING seq',
          [tenantId, id],
        );
        const seq = rows[0]?.seq;
        if (seq === undefined) return false;
        await client.query('INSERT INTO corpus_purges (corpus_seq) VALUES ($1) ON CONFLICT DO NOTHING', [seq]);
        return true;
      });
      if (removed) purges.kick();
      return removed;
    },

    async addDocuments(tenantId, corpusId, documents) {
      const { prepared, bytes, chunkCount } = prepareDocuments(documents);
      prepared.forEach((document, i) => {
        if (document.title !== null && hasNul(document.title)) {
          throw new ValidationError(`documents.${i}.title: must not contain U+0000`, [
            { path: `documents.${i}.title`, message: 'must not contain U+0000 (PostgreSQL text cannot hold it)' },
          ]);
        }
      });
      if (hasNul(corpusId)) throw new NotFoundError(`corpus ${corpusId}`);
      const createdAt = options.now();
      // Tokenized before the transaction, like the compression: it holds only the writes.
      const indexed = indexDocuments(prepared);
      const row = await inTransaction(pool, async (client) => {
        const corpus = await byId(client, tenantId, corpusId, true);
        if (corpus === undefined) throw new NotFoundError(`corpus ${corpusId}`);
        checkCorpusRoom(corpus, prepared.length, bytes);
        const termIds = await upsertTerms(client, corpus.seq, indexed.chunksWith);
        await insertDocuments(client, corpus.seq, prepared, createdAt);
        await insertChunks(client, corpus.seq, prepared, indexed.chunks, termIds);
        const updated = await client.query<CorpusRow>(
          `UPDATE corpora SET document_count = document_count + $1, chunk_count = chunk_count + $2,
             bytes = bytes + $3, tokens = tokens + $4
           WHERE seq = $5 RETURNING ${COLUMNS}`,
          [prepared.length, chunkCount, bytes, indexed.tokens, corpus.seq],
        );
        return updated.rows[0] as CorpusRow;
      });
      return { documentIds: prepared.map((d) => d.id), chunks: chunkCount, corpus: toRecord(row) };
    },

    async search(tenantId, corpusId, query, k) {
      checkSearch(query, k);
      if (hasNul(corpusId)) throw new NotFoundError(`corpus ${corpusId}`);
      const release = admit(tenantId);
      try {
        return await inTransaction(
          pool,
          async (client) => {
            const { rows } = await client.query<{ seq: number; chunk_count: number; tokens: number }>(
              'SELECT seq, chunk_count, tokens FROM corpora WHERE tenant_id = $1 AND id = $2',
              [tenantId, corpusId],
            );
            const corpus = rows[0];
            if (corpus === undefined) throw new NotFoundError(`corpus ${corpusId}`);
            const words = queryTerms(query);
            if (words.length === 0) return [];
            return searchCorpus(
              client,
              { seq: corpus.seq, chunks: corpus.chunk_count, tokens: corpus.tokens },
              words,
              k,
            );
          },
          { readOnly: true, statementTimeoutMs: searchTimeoutMs, indexOnly: true },
        );
      } catch (err) {
        if ((err as { code?: string }).code === QUERY_CANCELED) {
          throw new AppError(
            'SERVICE_UNAVAILABLE',
            `the search took longer than ${searchTimeoutMs} ms; retry shortly`,
            {
              retryAfterMs: BUSY_RETRY_AFTER_MS,
              cause: err,
            },
          );
        }
        throw err;
      } finally {
        release();
      }
    },

    stop: () => purges.stop(),
    purgeNow: () => purges.kick(),
  };
}
