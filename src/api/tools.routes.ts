import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { auditTools, type ToolAudit } from '../tools/description-audit.js';
import type { ToolRegistry } from '../tools/registry.js';
import { errorResponses } from './schemas.js';
import { BuiltInToolListSchema, ToolAuditReportSchema, ToolAuditRequestSchema } from './tool-audit-view.js';

/**
 * The agent tools (DESIGN §10, §11): the built-in tools with their own audit, and the description
 * audit of any Anthropic tool definitions. Tier 2 needs engagement analytics, which these routes do
 * not read yet: without them every tool is Tier 0 or 1.
 */
export async function toolRoutes(app: FastifyInstance, opts: { deps: { tools: ToolRegistry } }): Promise<void> {
  const { tools } = opts.deps;
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
    async () => {
      const definitions = tools.definitions(tools.names());
      const { totals, byPattern } = auditTools(definitions);
      const items = definitions.map((definition) => {
        const own = auditTools([definition]);
        return { definition, audit: { ...(own.tools[0] as ToolAudit), findings: own.findings } };
      });
      return { items, totals, byPattern };
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
          'counts, and a tier per tool.',
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
      ),
  );
}
