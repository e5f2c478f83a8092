import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MAX_AGENTS_PER_TENANT, MAX_VERSIONS_PER_AGENT, redactAgent } from '../domain/agents.js';
import { NotFoundError } from '../domain/errors.js';
import type { AgentRegistry } from '../domain/ports.js';
import {
  AgentGetQuerySchema,
  AgentListQuerySchema,
  AgentPageSchema,
  AgentParamsSchema,
  AgentUpdateSchema,
  AgentVersionsSchema,
  AgentViewSchema,
  NewAgentSchema,
  toAgentView,
} from './agent-view.js';
import { asQueryError } from './http/error-handler.js';
import { errorResponses } from './http/schemas.js';

/**
 * The agent registry of the caller's tenant (docs/design.md#workflow-definitions,
 * docs/design.md#http-api-conventions): named agent configs, versioned.
 * Workflows name a registered agent as a prompt's `agent` (or select among them); submission copies
 * the current version into the stored definition, so a run keeps the version it started with.
 */
export async function agentRoutes(app: FastifyInstance, opts: { deps: { agents: AgentRegistry } }): Promise<void> {
  const { agents } = opts.deps;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post(
    '/v1/agents',
    {
      schema: {
        operationId: 'createAgent',
        tags: ['agents'],
        summary: 'Register an agent',
        description:
          'Version 1 of a new name (a retired name continues its numbering). Prompts of your workflows may then name ' +
          'it as their `agent`; an agent of the definition’s own `agents` with the same name wins over it.',
        body: NewAgentSchema,
        response: { 201: AgentViewSchema, ...errorResponses(400, 401, 409, 413, 415, 429, 500) },
        responseDescriptions: {
          201: 'The agent, version 1 (or the next version of a retired name).',
          409: `A live agent of that name exists (CONFLICT), or you have ${MAX_AGENTS_PER_TENANT} agents (LIMIT_EXCEEDED).`,
        },
      },
    },
    async (request, reply) => {
      const agent = await agents.create(request.tenantId, request.body.name, redactAgent(request.body.config));
      return reply
        .code(201)
        .header('location', `/v1/agents/${encodeURIComponent(agent.name)}`)
        .send(toAgentView(agent));
    },
  );

  r.get(
    '/v1/agents',
    {
      schema: {
        operationId: 'listAgents',
        tags: ['agents'],
        summary: 'List registered agents (current versions), by name',
        querystring: AgentListQuerySchema,
        response: { 200: AgentPageSchema, ...errorResponses(400, 401, 429, 500) },
        responseDescriptions: { 200: 'A page of agents; pass nextCursor as ?cursor= for the next one.' },
      },
    },
    async (request) => {
      const { cursor, limit, role } = request.query;
      const page = await agents
        .list(request.tenantId, { cursor: cursor ?? null, limit, ...(role === undefined ? {} : { role }) })
        .catch(asQueryError);
      return { items: page.items.map(toAgentView), nextCursor: page.nextCursor };
    },
  );

  r.get(
    '/v1/agents/:name',
    {
      schema: {
        operationId: 'getAgent',
        tags: ['agents'],
        summary: 'One registered agent: its current version, or ?version=',
        params: AgentParamsSchema,
        querystring: AgentGetQuerySchema,
        response: { 200: AgentViewSchema, ...errorResponses(400, 401, 404, 429, 500) },
        responseDescriptions: { 200: 'The agent at that version.', 404: 'No such live agent, or no such version.' },
      },
    },
    async (request) => {
      const { name } = request.params;
      const { version } = request.query;
      const agent = await agents.get(request.tenantId, name, version);
      if (!agent) throw new NotFoundError(version === undefined ? `agent ${name}` : `agent ${name} version ${version}`);
      return toAgentView(agent);
    },
  );

  r.get(
    '/v1/agents/:name/versions',
    {
      schema: {
        operationId: 'listAgentVersions',
        tags: ['agents'],
        summary: 'Every version of a registered agent',
        params: AgentParamsSchema,
        response: { 200: AgentVersionsSchema, ...errorResponses(400, 401, 404, 429, 500) },
        responseDescriptions: { 200: 'The versions, oldest first.' },
      },
    },
    async (request) => {
      const items = await agents.versions(request.tenantId, request.params.name);
      if (items.length === 0) throw new NotFoundError(`agent ${request.params.name}`);
      return { items: items.map(toAgentView) };
    },
  );

  r.put(
    '/v1/agents/:name',
    {
      schema: {
        operationId: 'updateAgent',
        tags: ['agents'],
        summary: 'Add a version of a registered agent',
        description:
          'The config becomes version n + 1, used by workflows submitted from now on; runs submitted before keep the ' +
          'version they were submitted with.',
        params: AgentParamsSchema,
        body: AgentUpdateSchema,
        response: { 200: AgentViewSchema, ...errorResponses(400, 401, 404, 409, 413, 415, 429, 500) },
        responseDescriptions: {
          200: 'The new version.',
          409: `The agent has ${MAX_VERSIONS_PER_AGENT} versions (LIMIT_EXCEEDED).`,
        },
      },
    },
    async (request) => {
      const agent = await agents.update(request.tenantId, request.params.name, redactAgent(request.body.config));
      if (!agent) throw new NotFoundError(`agent ${request.params.name}`);
      return toAgentView(agent);
    },
  );

  r.delete(
    '/v1/agents/:name',
    {
      schema: {
        operationId: 'deleteAgent',
        tags: ['agents'],
        summary: 'Retire a registered agent',
        description:
          'The name is gone from the registry (404; new workflows cannot name it); its versions are kept for the runs ' +
          'that used them, and registering the name again continues its version numbers.',
        params: AgentParamsSchema,
        response: { 204: z.null().describe('Retired.'), ...errorResponses(400, 401, 404, 429, 500) },
      },
    },
    async (request, reply) => {
      if (!(await agents.retire(request.tenantId, request.params.name))) {
        throw new NotFoundError(`agent ${request.params.name}`);
      }
      return reply.code(204).send(null);
    },
  );
}
