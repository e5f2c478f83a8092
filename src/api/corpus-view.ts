import { z } from 'zod';
import {
  CORPUS_NAME_PATTERN,
  type CorpusRecord,
  DEFAULT_SEARCH_K,
  MAX_DESCRIPTION_CHARS,
  MAX_DOCUMENT_CHARS,
  MAX_DOCUMENTS_PER_REQUEST,
  MAX_QUERY_CHARS,
  MAX_SEARCH_K,
  MAX_TITLE_CHARS,
} from '../domain/corpus.js';

/**
 * HTTP shapes of the corpora API (docs/design.md#agent-tools, docs/design.md#http-api-conventions): the bodies,
 * queries and views the routes
 * validate and serialize, named as components in openapi.ts. camelCase like the workflow API.
 */

/** UTF-8 bytes of JSON a document's metadata may take. */
export const MAX_METADATA_BYTES = 4_096;

export const CorpusViewSchema = z.object({
  id: z.string().describe('cp_…, time-ordered.'),
  name: z.string().describe('Unique among this tenant’s corpora; usable in place of the id in paths.'),
  description: z.string().nullable(),
  documentCount: z.int(),
  chunkCount: z.int(),
  bytes: z.int().describe('UTF-8 bytes of the documents’ text.'),
  createdAt: z.iso.datetime(),
});
export type CorpusView = z.infer<typeof CorpusViewSchema>;

export function toCorpusView(record: CorpusRecord): CorpusView {
  return {
    id: record.id,
    name: record.name,
    description: record.description,
    documentCount: record.documentCount,
    chunkCount: record.chunkCount,
    bytes: record.bytes,
    createdAt: new Date(record.createdAt).toISOString(),
  };
}

export const NewCorpusSchema = z.strictObject({
  name: z
    .string()
    .regex(CORPUS_NAME_PATTERN, {
      message: 'must be 1-100 of A-Z a-z 0-9 . _ -, start with a letter or digit, and not start with cp_',
    })
    .describe('1-100 of `A-Z a-z 0-9 . _ -`, starting with a letter or digit; not `cp_…` (ids look so).'),
  description: z.string().max(MAX_DESCRIPTION_CHARS).optional(),
});

const MetadataSchema = z
  .record(z.string(), z.unknown())
  .refine((value) => Buffer.byteLength(JSON.stringify(value), 'utf8') <= MAX_METADATA_BYTES, {
    message: `must be at most ${MAX_METADATA_BYTES} bytes of JSON`,
  })
  .describe(`Any JSON object of at most ${MAX_METADATA_BYTES} bytes, stored with the document.`);

const NewDocumentSchema = z.strictObject({
  title: z.string().min(1).max(MAX_TITLE_CHARS).optional().describe('Shown with each hit of the document.'),
  text: z
    .string()
    .max(MAX_DOCUMENT_CHARS)
    .regex(/\S/, { message: 'must contain some text, not only whitespace' })
    .describe(`The document, at most ${MAX_DOCUMENT_CHARS} characters; split into overlapping chunks of ~800.`),
  metadata: MetadataSchema.optional(),
});

export const NewDocumentsSchema = z.strictObject({
  documents: z
    .array(NewDocumentSchema)
    .min(1)
    .max(MAX_DOCUMENTS_PER_REQUEST)
    .describe(`1-${MAX_DOCUMENTS_PER_REQUEST} documents, added in one transaction (all or none).`),
});

export const AddedDocumentsSchema = z.object({
  documentIds: z.array(z.string()).describe('doc_…, in the order the documents were sent.'),
  chunks: z.int().describe('Chunks created for them.'),
  corpus: CorpusViewSchema,
});

export const ChunkHitSchema = z.object({
  chunkId: z.string().describe('`<documentId>:<position>`.'),
  documentId: z.string(),
  title: z.string().nullable(),
  text: z.string(),
  score: z.number().describe('BM25, larger is better; comparable within one search only.'),
  position: z.int().describe('0-based index of the chunk in its document.'),
});

export const SearchQuerySchema = z.strictObject({
  q: z
    .string()
    .min(1)
    .max(MAX_QUERY_CHARS)
    .describe('Plain words (any search syntax is taken literally); chunks with any of them match, ranked by BM25.'),
  k: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_SEARCH_K)
    .default(DEFAULT_SEARCH_K)
    .describe(`Hits to return, 1-${MAX_SEARCH_K}.`),
});

export const SearchResultSchema = z.object({
  query: z.string(),
  count: z.int(),
  hits: z.array(ChunkHitSchema).describe('Best first.'),
});

export const CorpusPageSchema = z.object({
  items: z.array(CorpusViewSchema).describe('Newest first.'),
  nextCursor: z.string().nullable().describe('Pass as ?cursor= for the next page; null on the last.'),
});

export const CorpusListQuerySchema = z.strictObject({
  cursor: z.string().min(1).max(500).optional().describe('nextCursor of the previous page.'),
  limit: z.coerce.number().int().min(1).max(100).default(20).describe('Page size, 1-100.'),
});

export const CorpusParamsSchema = z.object({
  id: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,100}$/, { message: 'must be a corpus id such as cp_… or a corpus name' })
    .describe('Corpus id (cp_…) or name.'),
});
