import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { agentNamed, promptNodesOf } from '../../domain/definition.js';
import { NotFoundError } from '../../domain/errors.js';
import {
  agentLevelOf,
  promptLevelOf,
  reflectionBudgetOf,
  type SettingSource,
  workflowLevelOf,
} from '../../reflection/settings.js';
import { errorResponses, IdParamsSchema } from '../http/schemas.js';

/** The ports these routes use (route plugins get only what they need). */
type ReflectionControlDeps = Pick<Deps, 'executor'>;

/**
 * groundswell's reflection controls (docs/workflows.md#reflection): whether each level is on for a workflow,
 * its agents and its prompt nodes (`isEnabled`), and a reflection asked for by hand on a failed
 * node (`triggerReflection`). The answers come from reflection/settings.ts and reflection/manual.ts,
 * the same rules the run and the executor apply.
 */

const SOURCES = ['prompt', 'agent', 'workflow', 'default'] as const satisfies readonly SettingSource[];
const LevelSchema = z.object({
  enabled: z.boolean(),
  source: z
    .enum(SOURCES)
    .describe('Where it was decided: the prompt, its agent, the workflow options, or the default.'),
});

const NodeReflectionSchema = z.object({
  nodeId: z.string(),
  name: z.string(),
  agent: z.string(),
  status: z.string(),
  attempts: z.int(),
  promptLevel: LevelSchema.describe('Re-ask in the same conversation after a bad answer.'),
  agentLevel: LevelSchema.describe('The reflection prefix on the system prompt.'),
  workflowLevel: z.object({
    enabled: z.boolean(),
    attemptsLeft: z.int().describe('Attempts workflow-level reflection may still start (maxAttempts − attempts).'),
  }),
  byHand: z.object({
    requests: z.int().describe('Reflections asked for by hand so far.'),
    maxRequests: z.int().describe('At most this many per node (options.reflection.maxAttempts).'),
    refusal: z
      .string()
      .nullable()
      .describe('Why POST …/nodes/{nodeId}/reflect would answer 409 now; null when it would be accepted.'),
  }),
});

const ReflectionSettingsSchema = z
  .object({
    workflowId: z.string(),
    workflow: LevelSchema.extend({ maxAttempts: z.int(), retryDelayMs: z.int() }),
    agents: z.array(z.object({ name: z.string(), agentLevel: LevelSchema })),
    nodes: z.array(NodeReflectionSchema).describe('The workflow’s own prompt nodes (child workflows have their own).'),
    llmCalls: z.object({ sent: z.int(), max: z.int().describe('limits.maxLlmCalls') }),
  })
  .describe('ReflectionSettings');

const ReflectParamsSchema = IdParamsSchema.extend({
  nodeId: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,100}$/, { message: 'must be a node id such as nd_…' })
    .describe('Node id (nd_…), as the workflow view lists them.'),
});

// No body at all (a bare `curl -X POST`) is a request without a note.
const ReflectBodySchema = z
  .strictObject({
    reason: z
      .string()
      .min(1)
      .max(2_000)
      .optional()
      .describe('A note for the reflecting agent (what to change, what went wrong); stored redacted.'),
  })
  .nullish();

const ReflectionRequestViewSchema = z
  .object({
    id: z.string().describe('rr_…'),
    workflowId: z.string(),
    nodeId: z.string(),
    reason: z.string().nullable(),
    requestedAt: z.iso.datetime(),
    workflowStatus: z.string().describe('`running`: reopened and queued.'),
  })
  .describe('ReflectionRequest');

export async function reflectionControlRoutes(
  app: FastifyInstance,
  opts: { deps: ReflectionControlDeps },
): Promise<void> {
  const { deps } = opts;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/v1/workflows/:id/reflection',
    {
      schema: {
        operationId: 'getWorkflowReflectionSettings',
        tags: ['workflows'],
        summary: 'Whether reflection is on for the workflow, its agents and its prompt nodes (isEnabled)',
        description:
          'Each level with where it was decided, the attempts workflow-level reflection has left per node, and ' +
          'whether a reflection by hand would be accepted now (and why not).',
        params: IdParamsSchema,
        response: { 200: ReflectionSettingsSchema, ...errorResponses(400, 401, 404, 429, 500) },
        responseDescriptions: { 200: 'The reflection settings and budgets.' },
      },
    },
    async (request) => {
      const { id } = request.params;
      const state = await deps.executor.reflectionState(request.tenantId, id);
      if (!state) throw new NotFoundError(`workflow ${id}`);
      const { definition } = state.workflow;
      const budget = reflectionBudgetOf(definition);
      const workflowLevel = workflowLevelOf(definition);
      const prompts = promptNodesOf(definition.root);
      const nodes = state.nodes.flatMap((record) => {
        const node = prompts.get(record.name);
        if (node === undefined) return [];
        const agentName = typeof node.agent === 'string' ? node.agent : '';
        const agent = agentNamed(definition.agents, agentName);
        return [
          {
            nodeId: record.id,
            name: record.name,
            agent: agentName,
            status: record.status,
            attempts: record.attempts,
            promptLevel: promptLevelOf(node, agent, definition),
            agentLevel: agentLevelOf(agent),
            workflowLevel: {
              enabled: workflowLevel.enabled,
              attemptsLeft: Math.max(0, budget.maxAttempts - record.attempts),
            },
            byHand: {
              requests: state.requestCounts.get(record.id) ?? 0,
              maxRequests: budget.maxAttempts,
              refusal: state.refusal(record) ?? null,
            },
          },
        ];
      });
      return {
        workflowId: id,
        workflow: { ...workflowLevel, ...budget },
        agents: Object.entries(definition.agents ?? {}).map(([name, agent]) => ({
          name,
          agentLevel: agentLevelOf(agent),
        })),
        nodes,
        llmCalls: { sent: state.requestsSent, max: state.maxLlmCalls },
      };
    },
  );

  r.post(
    '/v1/workflows/:id/nodes/:nodeId/reflect',
    {
      schema: {
        operationId: 'reflectOnNode',
        tags: ['workflows'],
        summary: 'Reflect on a failed prompt node and run it again (triggerReflection)',
        description:
          'Reopens a failed root workflow: the node’s agent reflects on the failure (with your note), its ' +
          'revisions apply, and the node runs once more; the workflow then goes on from where it failed. Other ' +
          'failures stand; the workflow timeout restarts from the request; the reflection and the attempt count ' +
          'against maxLlmCalls and the tenant’s daily budget. One conditional update: of racing requests one ' +
          'wins. 409 saying why when the node cannot be reflected on now (GET …/reflection shows it in advance).',
        params: ReflectParamsSchema,
        body: ReflectBodySchema,
        response: { 202: ReflectionRequestViewSchema, ...errorResponses(400, 401, 404, 409, 413, 415, 429, 500, 503) },
        responseDescriptions: {
          202: 'Reopened: the workflow is queued; follow its events.',
          409: 'The workflow is not failed, the node is not a failed prompt, its error is not reflectable, or its budget is spent.',
        },
      },
    },
    async (request, reply) => {
      const { id, nodeId } = request.params;
      const done = await deps.executor.reflect(request.tenantId, id, nodeId, request.body?.reason ?? null);
      if (!done) throw new NotFoundError(`workflow ${id}`);
      const { workflow, request: made } = done;
      return reply.code(202).send({
        id: made.id,
        workflowId: made.workflowId,
        nodeId: made.nodeId,
        reason: made.reason,
        requestedAt: new Date(made.requestedAt).toISOString(),
        workflowStatus: workflow.status,
      });
    },
  );
}
