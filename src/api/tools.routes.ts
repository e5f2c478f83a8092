import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { EngagementStore } from '../domain/ports.js';
import { underEngagedTools } from '../metrics/engagement.js';
import { auditTools, type ToolAudit } from '../tools/description-audit.js';
import type { ToolRegistry } from '../tools/registry.js';
import { errorResponses } from './http/schemas.js';
import { BuiltInToolListSchema, ToolAuditReportSchema, ToolAuditRequestSchema } from './tool-audit-view.js';

/**
 * The agent tools (docs/design.md#agent-tools, docs/design.md#http-api-conventions): the built-in tools with their
 * own audit, and the description
 * audit of any Anthropic tool definitions. Tier 2 comes from the caller's retrieval engagement: a
 * model more than 30% below the most engaged one makes `retrieve` behavioural.
 */
export async function toolRoutes(
  app: FastifyInstance,
  opts: { deps: { tools: ToolRegistry; engagement: EngagementStore } },
): Promise<void> {
  const { tools, engagement } = opts.deps;
  const behaviouralTools = async (tenantId: string) => underEngagedTools(await engagement.sums(tenantId, {}));
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/v1/tools',
    {
      schema: {
        operationId: 'listTools',
        tags: ['tools'],
        summary: 'The built-in agent tools, each with its description audit',
        response: { 200: BuiltInToolListSchema, ...errorResponses(401, 429, 500) },
        responseDescriptions: { 200: 'The tools by name, their audits and the totals.' },
      },
    },
    async (request) => {
      const definitions = tools.definitions(tools.names());
      const options = { behaviouralTools: await behaviouralTools(request.tenantId) };
      const { totals, by_pattern } = auditTools(definitions, options);
      const items = definitions.map((definition) => {
        const own = auditTools([definition], options);
        return { definition, audit: { ...(own.tools[0] as ToolAudit), findings: own.findings } };
      });
      return { items, totals, by_pattern };
    },
  );

  r.post(
    '/v1/tools/audit',
    {
      schema: {
        operationId: 'auditTools',
        tags: ['tools'],
        summary: 'Audit tool descriptions for narrative bias',
        description:
          'Four detectors — cot-imperative, narrative-voice, verbose-hedging, meta-reference — over each tool ' +
          'description and every description in its input_schema: findings, bias rate, per-pattern and per-tool ' +
          'counts, and a tier per tool (2 for `retrieve` when your retrieval engagement shows a model more than ' +
          '30% below the most engaged one).',
        body: ToolAuditRequestSchema,
        response: { 200: ToolAuditReportSchema, ...errorResponses(400, 401, 413, 415, 429, 500) },
        responseDescriptions: { 200: 'The audit report.' },
      },
    },
    async (request) =>
      auditTools(
        request.body.tools.map((t) => ({
          name: t.name,
          description: t.description ?? '',
          input_schema: t.input_schema,
        })),
        { behaviouralTools: await behaviouralTools(request.tenantId) },
      ),
  );
}
