/**
 * Retrieval corpora (docs/design.md#agent-tools, docs/design.md#storage): a tenant's named collections of documents,
 * split into
 * overlapping chunks that `retrieve` and `GET /v1/corpora/{id}/search` rank by BM25. Types, the
 * limits and the chunking rule; the `CorpusStore` port that keeps them is in ports.ts.
 */

import { redactSecrets, redactValue } from './redact.js';

/** Corpora one tenant may hold at a time. */
export const MAX_CORPORA_PER_TENANT = 100;
/** Documents one corpus may hold. */
export const MAX_DOCUMENTS_PER_CORPUS = 10_000;
/** UTF-8 bytes of document text one corpus may hold (64 MiB): bounds its disk use and delete work. */
export const MAX_CORPUS_BYTES = 64 * 1024 * 1024;
/** Documents one `addDocuments` call (one request) may add. */
export const MAX_DOCUMENTS_PER_REQUEST = 500;
/** Characters (UTF-16 code units) of one document's text. */
export const MAX_DOCUMENT_CHARS = 200_000;
/** Characters of a search query; longer ones are refused, not truncated. */
export const MAX_QUERY_CHARS = 1_000;
/** Distinct words of a query that take part in the search; the rest are ignored (cost bound). */
export const MAX_QUERY_TERMS = 32;
/**
 * Rows one search scores at most (cost bound): its terms are taken rarest first while the
 * rows they match add up to this (store/query-terms.ts boundedTerms; the rarest always), and no more
 * rows are scored. A query whose every word is in more rows ranks the first of those rows by its
 * rarest word only.
 */
export const MAX_SCORED_ROWS = 2_000;
/** Hits one search may return, and how many it returns when not told. */
export const MAX_SEARCH_K = 50;
export const DEFAULT_SEARCH_K = 8;

/** A corpus name: 1-100 of `A-Z a-z 0-9 . _ -`, starting with a letter or digit, not `cp_` (ids start so). */
export const CORPUS_NAME_PATTERN = /^(?!cp_)[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
/** Characters of a corpus description and of a document title. */
export const MAX_DESCRIPTION_CHARS = 1_000;
export const MAX_TITLE_CHARS = 500;

/** Target chunk length in characters: about 150 English words, a paragraph or two. */
export const CHUNK_CHARS = 800;
/** Characters a chunk repeats from the end of the one before it, so a passage cut in two is whole in one. */
export const CHUNK_OVERLAP_CHARS = 100;
/** A cut is looked for in the second half of the window only: no chunk but the last is shorter than this. */
const MIN_CUT = CHUNK_CHARS / 2;

export interface CorpusRecord {
  /** `cp_…`, time-ordered. */
  id: string;
  tenantId: string;
  /** Unique per tenant; never starts with `cp_`, so an id and a name cannot be confused. */
  name: string;
  description: string | null;
  documentCount: number;
  chunkCount: number;
  /** UTF-8 bytes of the documents' text. */
  bytes: number;
  /** Epoch ms. */
  createdAt: number;
}

export interface NewCorpus {
  name: string;
  description?: string | undefined;
}

export interface NewDocument {
  title?: string | undefined;
  text: string;
  /** Stored with the document, returned by nothing yet (a filter later). */
  metadata?: Record<string, unknown> | undefined;
}

/**
 * What a corpus keeps is redacted like everything else baton stores (docs/design.md#security): a key or a
 * password pasted into a document would otherwise be kept, found by search and handed, as a
 * retrieved chunk, to every model that asks. Only the secrets are replaced; the rest of the text
 * is kept word for word. Copy-on-write: a document without secrets comes back as is.
 */
export function redactDocument(document: NewDocument): NewDocument {
  const title = document.title === undefined ? undefined : redactSecrets(document.title);
  const text = redactSecrets(document.text);
  const metadata = redactValue(document.metadata) as NewDocument['metadata'];
  if (title === document.title && text === document.text && metadata === document.metadata) return document;
  return { ...document, title, text, metadata };
}

/** A corpus description, redacted the same way. */
export function redactCorpus(corpus: NewCorpus): NewCorpus {
  if (corpus.description === undefined) return corpus;
  const description = redactSecrets(corpus.description);
  return description === corpus.description ? corpus : { ...corpus, description };
}

export interface AddDocumentsResult {
  /** `doc_…`, in the order the documents were given. */
  documentIds: string[];
  /** Chunks created for them. */
  chunks: number;
  /** The corpus as this write left it. */
  corpus: CorpusRecord;
}

/** One ranked chunk: assignable to the `retrieve` tool's RetrievedChunk. */
export interface ChunkHit {
  /** `<documentId>:<position>`. */
  chunkId: string;
  documentId: string;
  title: string | null;
  text: string;
  /** BM25, larger is better (FTS5's bm25() negated). Comparable within one search only. */
  score: number;
  /** 0-based index of the chunk within its document. */
  position: number;
}

/** Is `text[i]` the second half of a surrogate pair (cutting before it would split a character)? */
function isLowSurrogate(text: string, i: number): boolean {
  const code = text.charCodeAt(i);
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Where the chunk starting at `start` ends: a paragraph break, else whitespace, else a hard cut. */
function cutPoint(text: string, start: number): number {
  const window = text.slice(start, start + CHUNK_CHARS);
  const paragraph = window.lastIndexOf('\n\n');
  if (paragraph >= MIN_CUT) return start + paragraph;
  for (let i = window.length - 1; i >= MIN_CUT; i--) {
    if (/\s/.test(window.charAt(i))) return start + i;
  }
  const hard = start + CHUNK_CHARS;
  return isLowSurrogate(text, hard) ? hard - 1 : hard;
}

/** Where the next chunk starts: CHUNK_OVERLAP_CHARS before `cut`, moved forward to a word start. */
function nextStart(text: string, cut: number): number {
  const from = cut - CHUNK_OVERLAP_CHARS;
  for (let i = from; i < cut; i++) {
    if (/\s/.test(text.charAt(i))) return i + 1;
  }
  return isLowSurrogate(text, from) ? from + 1 : from;
}

/**
 * Splits a document into chunks of at most CHUNK_CHARS characters. Each chunk ends at the last
 * paragraph break (blank line) of its window, else at the last whitespace, else (one very long
 * word) mid-word, and in the window's second half; the next chunk starts up to CHUNK_OVERLAP_CHARS
 * before that end, at a word boundary. Chunks are trimmed; a text of at most CHUNK_CHARS is one
 * chunk; a blank text has none.
 */
export function chunkText(text: string): string[] {
  const chunks: string[] = [];
  let start = 0;
  while (start < text.length) {
    if (text.length - start <= CHUNK_CHARS) {
      const last = text.slice(start).trim();
      if (last !== '') chunks.push(last);
      break;
    }
    const cut = cutPoint(text, start);
    const chunk = text.slice(start, cut).trim();
    if (chunk !== '') chunks.push(chunk);
    start = nextStart(text, cut);
  }
  return chunks;
}
