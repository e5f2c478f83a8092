import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MAX_CORPORA_PER_TENANT, MAX_DOCUMENTS_PER_CORPUS } from '../domain/corpus.js';
import { NotFoundError } from '../domain/errors.js';
import type { CorpusStore } from '../domain/ports.js';
import { redactSecrets } from '../domain/redact.js';
import {
  AddedDocumentsSchema,
  CorpusListQuerySchema,
  CorpusPageSchema,
  CorpusParamsSchema,
  CorpusViewSchema,
  NewCorpusSchema,
  NewDocumentsSchema,
  SearchQuerySchema,
  SearchResultSchema,
  toCorpusView,
} from './corpus-view.js';
import { asQueryError } from './http/error-handler.js';
import { errorResponses } from './http/schemas.js';

/**
 * Retrieval corpora of the caller's tenant (docs/design.md#agent-tools, docs/design.md#http-api-conventions): create,
 * fill, search, delete.
 */

/**
 * Body limit of POST /v1/corpora/{id}/documents (8 MiB, or BODY_LIMIT_BYTES when that is larger):
 * a batch of documents is bigger than any other request, yet one request stays one short commit.
 */
export const DOCUMENTS_BODY_LIMIT_BYTES = 8 * 1024 * 1024;

export interface CorporaRouteDeps {
  corpora: CorpusStore;
  config: { BODY_LIMIT_BYTES: number };
}

export async function corporaRoutes(app: FastifyInstance, opts: { deps: CorporaRouteDeps }): Promise<void> {
  const { corpora, config } = opts.deps;
  const r = app.withTypeProvider<ZodTypeProvider>();
  const documentsBodyLimit = Math.max(DOCUMENTS_BODY_LIMIT_BYTES, config.BODY_LIMIT_BYTES);

  /** Tenant scoping: another tenant's corpus is a 404, exactly like one that does not exist. */
  const owned = async (tenantId: string, idOrName: string) => {
    const corpus = await corpora.get(tenantId, idOrName);
    if (corpus === undefined) throw new NotFoundError(`corpus ${idOrName}`);
    return corpus;
  };

  r.post(
    '/v1/corpora',
    {
      schema: {
        operationId: 'createCorpus',
        tags: ['corpora'],
        summary: 'Create a corpus',
        body: NewCorpusSchema,
        response: { 201: CorpusViewSchema, ...errorResponses(400, 401, 409, 413, 415, 429, 500) },
        responseDescriptions: {
          201: 'The corpus, empty.',
          409: `A corpus of that name exists (CONFLICT), or the tenant holds ${MAX_CORPORA_PER_TENANT} corpora (LIMIT_EXCEEDED).`,
        },
      },
    },
    async (request, reply) => {
      const corpus = await corpora.create(request.tenantId, request.body);
      return reply.code(201).header('location', `/v1/corpora/${corpus.id}`).send(toCorpusView(corpus));
    },
  );

  r.get(
    '/v1/corpora',
    {
      schema: {
        operationId: 'listCorpora',
        tags: ['corpora'],
        summary: 'List corpora, newest first',
        querystring: CorpusListQuerySchema,
        response: { 200: CorpusPageSchema, ...errorResponses(400, 401, 429, 500) },
        responseDescriptions: { 200: 'A page of corpora; pass nextCursor as ?cursor= for the next one.' },
      },
    },
    async (request) => {
      const { cursor, limit } = request.query;
      const page = await corpora.list(request.tenantId, { cursor: cursor ?? null, limit }).catch(asQueryError);
      return { items: page.items.map(toCorpusView), nextCursor: page.nextCursor };
    },
  );

  r.get(
    '/v1/corpora/:id',
    {
      schema: {
        operationId: 'getCorpus',
        tags: ['corpora'],
        summary: 'One corpus, by id or name',
        params: CorpusParamsSchema,
        response: { 200: CorpusViewSchema, ...errorResponses(400, 401, 404, 429, 500) },
        responseDescriptions: { 200: 'The corpus with its counts.' },
      },
    },
    async (request) => toCorpusView(await owned(request.tenantId, request.params.id)),
  );

  r.delete(
    '/v1/corpora/:id',
    {
      schema: {
        operationId: 'deleteCorpus',
        tags: ['corpora'],
        summary: 'Delete a corpus with its documents and chunks',
        description:
          'The corpus is gone at once (404, its name free again, no search finds its chunks); its rows are purged ' +
          'in the background in small commits.',
        params: CorpusParamsSchema,
        response: { 204: z.null().describe('Deleted.'), ...errorResponses(400, 401, 404, 429, 500) },
      },
    },
    async (request, reply) => {
      const corpus = await owned(request.tenantId, request.params.id);
      if (!(await corpora.delete(request.tenantId, corpus.id))) throw new NotFoundError(`corpus ${request.params.id}`);
      return reply.code(204).send(null);
    },
  );

  r.post(
    '/v1/corpora/:id/documents',
    {
      bodyLimit: documentsBodyLimit,
      schema: {
        operationId: 'addCorpusDocuments',
        tags: ['corpora'],
        summary: 'Add documents to a corpus',
        description:
          'Each document is split into chunks of about 800 characters that overlap by about 100, cut at paragraph ' +
          'breaks or whitespace, and indexed for BM25 search; all documents of the request commit together.',
        params: CorpusParamsSchema,
        body: NewDocumentsSchema,
        response: { 201: AddedDocumentsSchema, ...errorResponses(400, 401, 404, 409, 413, 415, 429, 500) },
        responseDescriptions: {
          201: 'The new document ids, the chunks created, and the corpus after the write.',
          409: `The corpus would hold more than ${MAX_DOCUMENTS_PER_CORPUS} documents or MAX_CORPUS_BYTES of text (LIMIT_EXCEEDED).`,
          413: `The body is larger than ${documentsBodyLimit} bytes.`,
        },
      },
    },
    async (request, reply) => {
      const corpus = await owned(request.tenantId, request.params.id);
      const added = await corpora.addDocuments(request.tenantId, corpus.id, request.body.documents);
      return reply.code(201).send({ ...added, corpus: toCorpusView(added.corpus) });
    },
  );

  r.get(
    '/v1/corpora/:id/search',
    {
      schema: {
        operationId: 'searchCorpus',
        tags: ['corpora'],
        summary: 'Search a corpus: the k chunks that match the query best (BM25)',
        params: CorpusParamsSchema,
        querystring: SearchQuerySchema,
        response: { 200: SearchResultSchema, ...errorResponses(400, 401, 404, 429, 500) },
        responseDescriptions: { 200: 'The hits, best first (none when the query has no word).' },
      },
    },
    async (request) => {
      const corpus = await owned(request.tenantId, request.params.id);
      const { q, k } = request.query;
      const hits = await corpora.search(request.tenantId, corpus.id, q, k).catch(asQueryError);
      // Echoed the way the retrieve tool echoes its query: redacted (docs/design.md#security).
      return { query: redactSecrets(q), count: hits.length, hits };
    },
  );
}
