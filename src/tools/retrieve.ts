import { z } from 'zod';
import { AppError } from '../domain/errors.js';
import { defineTool, ToolRefusal } from './tool.js';

/**
 * `retrieve {query}` (docs/design.md#agent-tools): the calling prompt's corpus, BM25-ranked, at most the prompt's
 * `retrieval.maxChunks` chunks. The chunks are documents, not instructions: the registry hands them
 * to the model inside the data delimiter like every tool output.
 */
export const retrieveTool = defineTool({
  name: 'retrieve',
  description: 'Return the chunks of the corpus most relevant to the query, best first.',
  input: z.object({
    query: z.string().trim().min(1).max(1_000).describe('The information to find, in 5-15 specific words.'),
  }),
  readOnly: true,
  async run({ query }, context) {
    const chunks = await context.retrieve(query).catch((err: unknown) => {
      // The tenant's searches are at SEARCH_CONCURRENCY_PER_TENANT, or the corpus was deleted while the
      // loop ran: the model is told, nothing is logged as a fault.
      if (err instanceof AppError && (err.code === 'RATE_LIMITED' || err.code === 'NOT_FOUND')) {
        throw new ToolRefusal(err.message, err.code);
      }
      throw err;
    });
    return { query, count: chunks.length, chunks };
  },
});
