import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { errorResponses, IdParamsSchema } from '../http/schemas.js';

/** The ports these routes use (route plugins get only what they need). */
type NodeToolRouteDeps = Pick<Deps, 'toolExplorer'>;

const NodeToolParamsSchema = IdParamsSchema.extend({
  nodeId: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,100}$/, { message: 'must be a node id such as nd_…' })
    .describe('Node id (nd_…), as the workflow view lists them.'),
  tool: z
    .string()
    .regex(/^[a-z_]{1,64}$/, { message: 'must be a tool name such as inspect_current_node' })
    .describe('A read-only built-in tool (GET /v1/tools lists them).'),
});

const ExplorationSchema = z
  .object({
    tool: z.string(),
    nodeId: z.string(),
    isError: z.boolean().describe('The tool refused (what the model would get as a tool-result error).'),
    output: z.unknown().describe('What the tool returns, as an agent at that node would read it.'),
  })
  .describe('ToolExploration');

/**
 * docs/design.md#http-api-conventions: a read-only tool run as a node of a workflow, for exploration from Swagger UI.
 */
export async function nodeToolRoutes(app: FastifyInstance, opts: { deps: NodeToolRouteDeps }): Promise<void> {
  const { deps } = opts;
  app.withTypeProvider<ZodTypeProvider>().post(
    '/v1/workflows/:id/nodes/:nodeId/tools/:tool',
    {
      schema: {
        operationId: 'runNodeTool',
        tags: ['tools'],
        summary: 'Run a read-only introspection tool as a node of a workflow',
        description:
          'Answers what an agent at that node would be told (e.g. inspect_current_node, inspect_prior_outputs). ' +
          'Tools that change anything (request_spawn_workflow) are refused with 403.',
        params: NodeToolParamsSchema,
        body: z.record(z.string(), z.unknown()).default({}).describe("The tool's input (its input_schema)."),
        response: { 200: ExplorationSchema, ...errorResponses(400, 401, 403, 404, 413, 415, 429, 500) },
        responseDescriptions: { 200: 'The tool ran (isError: it refused).' },
      },
    },
    async (request) => {
      const { id, nodeId, tool } = request.params;
      return deps.toolExplorer.explore(request.tenantId, id, nodeId, tool, request.body ?? {});
    },
  );
}
