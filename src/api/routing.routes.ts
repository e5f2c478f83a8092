import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AllocationSchema, TierSchema } from '../domain/allocation.js';
import { AgentsSchema, NodeSchema, promptNodesOf } from '../domain/definition.js';
import { AGENT_ROLES } from '../domain/names.js';
import type { ModelCatalog } from '../domain/ports.js';
import { COMPLEXITIES, TASK_SIGNALS, TaskSchema } from '../domain/task.js';
import { explainComplexity } from '../metrics/complexity.js';
import { COMPLEXITY_ALLOCATIONS, tierFor } from '../routing/allocation.js';
import { definitionRolesOf, identifyRequiredAgents } from '../routing/required-agents.js';
import { errorResponses } from './http/schemas.js';

/**
 * Complexity routing (docs/design.md#complexity-allocation-selection-and-review): the classifier's dry run and the
 * models it routes to.
 */

const PriceSchema = z.object({
  input: z.number(),
  output: z.number(),
  cacheRead: z.number(),
  cacheWrite: z.number(),
});

const ClassifyRequestSchema = z.strictObject({
  task: TaskSchema.optional().describe('`complexity` wins; else the signals; else the tree.'),
  root: NodeSchema.optional().describe('A workflow tree: its prompt nodes give the scope signal without a task.'),
  agents: AgentsSchema.optional().describe("The definition's agents: their `role`s count as roles `root` names."),
});

const RequiredAgentsSchema = z
  .object({
    source: z
      .enum(['definition', 'task'])
      .describe('`definition`: the roles the prompts of `root` name (agent `role`, `select.role`); `task`: derived.'),
    roles: z.array(
      z.object({ role: z.enum(AGENT_ROLES), reason: z.string().describe('The rule or prompt that requires it.') }),
    ),
  })
  .describe(
    'The agent roles the task needs (loki-mode identify_required_agents), in role order: from the signals ' +
      '(tests_only: testing; documentation, typo_fix: development; bug_fix, feature, refactor, …: development and ' +
      'testing; architecture: also planning; security: review), else the type, else development and testing; ' +
      'plus planning and review when the allocation plans or reviews (docs/workflows.md#complexity-routing-and-human-checkpoints).',
  );

const ClassificationSchema = z.object({
  complexity: z.enum(COMPLEXITIES),
  source: z.enum(['declared', 'signals', 'tree']),
  score: z.number().nullable().describe('Sum of the signal weights; null when the complexity was declared.'),
  signals: z.array(z.enum(TASK_SIGNALS)).describe('The signals that were summed.'),
  prompt_nodes: z.int().describe('Prompt nodes in `root` (0 without it).'),
  allocation: AllocationSchema,
  models: z
    .record(z.enum(AGENT_ROLES), z.string())
    .describe('What `model: "auto"` resolves to for each role at this complexity (provider/model).'),
  required_agents: RequiredAgentsSchema,
});

const ModelsSchema = z.object({
  providers: z.array(z.object({ name: z.string(), configured: z.boolean(), simulated: z.boolean() })),
  defaultModel: z.string(),
  tiers: z.array(z.object({ tier: TierSchema, model: z.string(), price: PriceSchema })),
  prices: z.array(z.object({ model: z.string(), price: PriceSchema })).describe('MODEL_PRICES entries.'),
});

export async function routingRoutes(app: FastifyInstance, opts: { deps: { models: ModelCatalog } }): Promise<void> {
  const { models } = opts.deps;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post(
    '/v1/complexity/classify',
    {
      schema: {
        operationId: 'classifyComplexity',
        tags: ['routing'],
        summary: 'Classify a task’s complexity and show the allocation it implies (dry run)',
        description:
          'The level (trivial … critical), the score and the signals used, the seed’s allocation for that level ' +
          '(max agents, tier per role, review mode, parallel, human checkpoint) and the model `auto` gives each role.',
        body: ClassifyRequestSchema,
        response: { 200: ClassificationSchema, ...errorResponses(400, 401, 413, 415, 429, 500) },
        responseDescriptions: { 200: 'The classification and its allocation.' },
      },
    },
    async (request) => {
      const { task, root, agents } = request.body;
      const promptNodes = root ? promptNodesOf(root).size : 0;
      const explained = explainComplexity(task, promptNodes);
      const roleModels = Object.fromEntries(
        AGENT_ROLES.map((role) => [role, models.resolve(tierFor(role, explained.complexity)).id]),
      ) as Record<(typeof AGENT_ROLES)[number], string>;
      return {
        ...explained,
        prompt_nodes: promptNodes,
        allocation: COMPLEXITY_ALLOCATIONS[explained.complexity],
        models: roleModels,
        required_agents: identifyRequiredAgents(
          task,
          explained.complexity,
          root ? definitionRolesOf(root, agents ?? {}) : [],
        ),
      };
    },
  );

  r.get(
    '/v1/models',
    {
      schema: {
        operationId: 'listModels',
        tags: ['routing'],
        summary: 'Providers, tiers, model ids and prices',
        description: 'Prices are USD per million tokens; `sim` costs are simulated money, reported apart.',
        response: { 200: ModelsSchema, ...errorResponses(401, 429, 500) },
        responseDescriptions: { 200: 'The model catalog.' },
      },
    },
    async () => models.describe(),
  );
}
