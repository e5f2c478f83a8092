import { z } from 'zod';
import { MAX_AGENTS_PER_TENANT, MAX_VERSIONS_PER_AGENT, type RegisteredAgent } from '../domain/agents.js';
import { AgentConfigSchema } from '../domain/definition.js';
import { AGENT_ROLES, NameSchema } from '../domain/names.js';

/**
 * HTTP shapes of the agent registry (docs/design.md#workflow-definitions, docs/design.md#http-api-conventions),
 * camelCase like the workflow API.
 */

export const AgentViewSchema = z.object({
  name: z.string(),
  version: z.int().describe('1 for a new name; each PUT adds one.'),
  role: z.enum(AGENT_ROLES).nullable().describe('The config’s role (what selection filters by).'),
  config: AgentConfigSchema,
  createdAt: z.iso.datetime().describe('When this version was created.'),
});
export type AgentView = z.infer<typeof AgentViewSchema>;

export function toAgentView(agent: RegisteredAgent): AgentView {
  return {
    name: agent.name,
    version: agent.version,
    role: agent.role,
    config: agent.config,
    createdAt: new Date(agent.createdAt).toISOString(),
  };
}

export const NewAgentSchema = z.strictObject({
  name: NameSchema.describe(
    `Unique among your live agents (at most ${MAX_AGENTS_PER_TENANT}); prompts name it as their \`agent\`.`,
  ),
  config: AgentConfigSchema,
});

export const AgentUpdateSchema = z.strictObject({
  config: AgentConfigSchema.describe(`Becomes version n + 1 (at most ${MAX_VERSIONS_PER_AGENT} per name).`),
});

export const AgentParamsSchema = z.strictObject({ name: NameSchema });

export const AgentGetQuerySchema = z.strictObject({
  version: z.coerce.number().int().min(1).optional().describe('A version of the agent; default the current one.'),
});

export const AgentListQuerySchema = z.strictObject({
  role: z.enum(AGENT_ROLES).optional().describe('Only agents of this role.'),
  cursor: z.string().min(1).max(500).optional().describe('nextCursor of the previous page.'),
  limit: z.coerce.number().int().min(1).max(100).default(20).describe('Page size, 1-100.'),
});

export const AgentPageSchema = z.object({
  items: z.array(AgentViewSchema),
  nextCursor: z.string().nullable(),
});

export const AgentVersionsSchema = z.object({
  items: z.array(AgentViewSchema).describe('Oldest first.'),
});
