import {
  CORPUS_NAME_PATTERN,
  type CorpusRecord,
  chunkText,
  MAX_CORPORA_PER_TENANT,
  MAX_CORPUS_BYTES,
  MAX_DOCUMENT_CHARS,
  MAX_DOCUMENTS_PER_CORPUS,
  MAX_DOCUMENTS_PER_REQUEST,
  MAX_QUERY_CHARS,
  MAX_SEARCH_K,
  type NewCorpus,
  type NewDocument,
  redactCorpus,
  redactDocument,
} from '../domain/corpus.js';
import { AppError, ValidationError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { packChunk } from './chunk-text.js';

/**
 * What both corpus stores (store/sqlite/corpora.repo.ts, store/postgres/corpora.ts) share, free of
 * any driver: the row of `corpora` and its mapping, the checks of every input in the order both
 * apply them, and the documents as they are written (redacted, chunked, packed). One source, so the
 * two answer the same inputs with the same records and the same errors.
 */

export const CORPUS_COLUMNS = 'seq, id, tenant_id, name, description, document_count, chunk_count, bytes, created_at';

export interface CorpusRow {
  seq: number;
  id: string;
  tenant_id: string;
  name: string;
  description: string | null;
  document_count: number;
  chunk_count: number;
  bytes: number;
  created_at: number;
}

export function toCorpusRecord(row: CorpusRow): CorpusRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    description: row.description,
    documentCount: row.document_count,
    chunkCount: row.chunk_count,
    bytes: row.bytes,
    createdAt: row.created_at,
  };
}

export function limitExceeded(path: string, message: string): AppError {
  return new AppError('LIMIT_EXCEEDED', `${path}: ${message}`, { details: [{ path, message }] });
}

/** The corpus as it is stored (redacted), or ValidationError for a name that is not allowed. */
export function checkedCorpus(corpus: NewCorpus): { name: string; description: string | null } {
  const { name, description } = redactCorpus(corpus);
  if (!CORPUS_NAME_PATTERN.test(name)) {
    throw new ValidationError(`name: must match ${CORPUS_NAME_PATTERN.source}`, [
      { path: 'name', message: `must match ${CORPUS_NAME_PATTERN.source}` },
    ]);
  }
  return { name, description: description ?? null };
}

export const tooManyCorpora = (): AppError =>
  limitExceeded('corpora', `a tenant holds at most ${MAX_CORPORA_PER_TENANT} corpora (MAX_CORPORA_PER_TENANT)`);

export const nameTaken = (name: string): AppError =>
  new AppError('CONFLICT', `a corpus named "${name}" exists`, {
    details: [{ path: 'name', message: `is taken by another corpus of this tenant` }],
  });

export function checkedLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new ValidationError('Invalid limit', [{ path: 'limit', message: 'must be a positive integer' }]);
  }
  return limit;
}

/** A document as it is written: redacted, chunked and each chunk packed (chunk-text.ts). */
export interface PreparedDocument {
  id: string;
  title: string | null;
  /** JSON, or null. */
  metadata: string | null;
  /** UTF-8 bytes of the (redacted) text. */
  size: number;
  chunks: string[];
  packed: Buffer[];
}

/**
 * Checks and prepares one call's documents, before any transaction: the work that takes time
 * (redaction, chunking, compression) is done outside it.
 */
export function prepareDocuments(documents: readonly NewDocument[]): {
  prepared: PreparedDocument[];
  bytes: number;
  chunkCount: number;
} {
  if (documents.length > MAX_DOCUMENTS_PER_REQUEST) {
    throw limitExceeded(
      'documents',
      `at most ${MAX_DOCUMENTS_PER_REQUEST} documents per request (MAX_DOCUMENTS_PER_REQUEST)`,
    );
  }
  let bytes = 0;
  let chunkCount = 0;
  const prepared = documents.map((given, i): PreparedDocument => {
    if (given.text.length > MAX_DOCUMENT_CHARS) {
      throw limitExceeded(`documents.${i}.text`, `at most ${MAX_DOCUMENT_CHARS} characters (MAX_DOCUMENT_CHARS)`);
    }
    const document = redactDocument(given);
    const chunks = chunkText(document.text);
    if (chunks.length === 0) {
      throw new ValidationError(`documents.${i}.text: is blank`, [
        { path: `documents.${i}.text`, message: 'is blank' },
      ]);
    }
    const size = Buffer.byteLength(document.text, 'utf8');
    bytes += size;
    chunkCount += chunks.length;
    const metadata = document.metadata === undefined ? null : JSON.stringify(document.metadata);
    return { id: newId('doc'), title: document.title ?? null, metadata, size, chunks, packed: chunks.map(packChunk) };
  });
  return { prepared, bytes, chunkCount };
}

/** Inside the write: would these documents take the corpus past its limits? */
export function checkCorpusRoom(corpus: CorpusRow, documents: number, bytes: number): void {
  if (corpus.document_count + documents > MAX_DOCUMENTS_PER_CORPUS) {
    throw limitExceeded(
      'documents',
      `a corpus holds at most ${MAX_DOCUMENTS_PER_CORPUS} documents (MAX_DOCUMENTS_PER_CORPUS); it has ${corpus.document_count}`,
    );
  }
  if (corpus.bytes + bytes > MAX_CORPUS_BYTES) {
    throw limitExceeded(
      'documents',
      `a corpus holds at most ${MAX_CORPUS_BYTES} bytes of text (MAX_CORPUS_BYTES); it has ${corpus.bytes}`,
    );
  }
}

export function checkSearch(query: string, k: number): void {
  if (!Number.isInteger(k) || k < 1 || k > MAX_SEARCH_K) {
    throw new ValidationError('Invalid k', [{ path: 'k', message: `must be an integer from 1 to ${MAX_SEARCH_K}` }]);
  }
  if (query.length > MAX_QUERY_CHARS) {
    throw new ValidationError('Query too long', [
      { path: 'q', message: `must be at most ${MAX_QUERY_CHARS} characters` },
    ]);
  }
}
