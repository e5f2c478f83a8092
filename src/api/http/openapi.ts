import type { FastifyDynamicSwaggerOptions, SwaggerTransform, SwaggerTransformObject } from '@fastify/swagger';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { NodeSchema, WorkflowDefinitionSchema } from '../../domain/definition.js';
import { EfficiencyRecordSchema, RewardRecordSchema } from '../../domain/metrics.js';
import { auditTools } from '../../tools/description-audit.js';
import { AgentViewSchema, NewAgentSchema } from '../agent-view.js';
import { ChunkHitSchema, CorpusViewSchema, NewCorpusSchema, NewDocumentsSchema } from '../corpus-view.js';
import {
  AuditedToolSchema,
  AuditFindingSchema,
  ToolAuditReportSchema,
  ToolAuditRequestSchema,
  ToolAuditSchema,
  ToolDefinitionViewSchema,
} from '../tool-audit-view.js';
import { SpanViewSchema, TraceSummaryViewSchema, TraceViewSchema } from '../trace-view.js';
import { agentExample, corpusExample, documentsExample, quickStartExample, toolAuditExample } from './examples.js';
import { ErrorBodySchema, NodeViewSchema, WorkflowSummarySchema, WorkflowViewSchema } from './schemas.js';

/**
 * The OpenAPI document (docs/design.md#http-api-conventions): OpenAPI 3.1, so zod's JSON Schema 2020-12 output (`type:
 * "null"`) is used as it is, instead of 3.0's `nullable`, which cannot be said of a `$ref`. Shared
 * shapes are named components; every response is described; generated clients name their methods
 * after the operationIds the routes set.
 */

declare module 'fastify' {
  interface FastifySchema {
    /** Descriptions of this route's responses by status, where the schema's own would not do. */
    responseDescriptions?: Partial<Record<number, string>>;
  }
}

type Json = Record<string, unknown>;

const retryAfter = { type: 'integer', description: 'Seconds to wait before retrying.' };

/** The error statuses every route shares, so each route declares only the codes it can answer. */
const ERROR_RESPONSES: Record<string, { description: string; headers?: Json }> = {
  400: { description: 'The request is invalid; `details` names each offending field.' },
  401: { description: 'Missing or unknown API key (`Authorization: Bearer <key>`).' },
  403: { description: 'The action is not allowed here (e.g. a tool that changes the run, through exploration).' },
  404: { description: 'No such object for this API key (another tenant’s objects are not found either).' },
  409: { description: 'The object is not in a state that allows this.' },
  413: { description: 'The body is larger than BODY_LIMIT_BYTES (1 MiB by default).' },
  415: { description: 'The body is not JSON: send `content-type: application/json`.' },
  422: { description: 'The request is well-formed but cannot be processed.' },
  429: {
    description: 'More than RATE_LIMIT_PER_MINUTE requests per minute for this API key.',
    headers: { 'retry-after': retryAfter },
  },
  500: { description: 'Internal error; nothing about it is disclosed (it is in the service log).' },
  503: {
    description: 'The service is shutting down; retry elsewhere or later.',
    headers: { 'retry-after': retryAfter },
  },
};

/** `agent_span` → `AgentSpan`. */
const componentName = (spanType: string): string =>
  spanType
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');

/**
 * Names the shared schemas in zod's global registry, where the transform finds them (and where
 * every `.describe()` of the domain schemas already lives). Idempotent, so building several apps in
 * one process (tests) is fine.
 */
export function registerOpenApiMetadata(): void {
  const registry = z.globalRegistry;
  const ensure = (schema: z.ZodType, meta: Record<string, unknown>): void => {
    const current = registry.get(schema);
    if (current && Object.keys(meta).every((key) => key in current)) return;
    if (current) registry.remove(schema);
    registry.add(schema, { ...current, ...meta });
  };
  ensure(WorkflowDefinitionSchema, {
    id: 'WorkflowDefinition',
    description:
      'A workflow definition: agents, a tree of prompt, sequence, parallel and workflow nodes, options. See the README.',
    examples: [quickStartExample],
  });
  ensure(NodeSchema, { id: 'WorkflowNode' });
  ensure(NodeViewSchema, { id: 'NodeView' });
  ensure(WorkflowSummarySchema, { id: 'WorkflowSummary', description: 'A workflow without its output and tree.' });
  ensure(WorkflowViewSchema, { id: 'WorkflowView', description: 'A workflow: status, output and node tree.' });
  ensure(ErrorBodySchema, { id: 'Error', description: 'Every error answer has this shape.' });
  ensure(TraceSummaryViewSchema, { id: 'TraceSummary', description: 'A trace without its spans.' });
  ensure(TraceViewSchema, { id: 'Trace', description: 'The spans of a root workflow and its children.' });
  const mapping: Record<string, string> = {};
  for (const option of SpanViewSchema.options) {
    const type = option.shape.type.value;
    mapping[type] = `#/components/schemas/${componentName(type)}`;
    ensure(option, { id: componentName(type), description: `A span of type ${type}.` });
  }
  ensure(SpanViewSchema, {
    id: 'Span',
    description: 'One span; `type` says which fields it has.',
    discriminator: { propertyName: 'type', mapping },
  });
  ensure(EfficiencyRecordSchema, { id: 'EfficiencyRecord', description: 'How efficiently a finished workflow ran.' });
  ensure(RewardRecordSchema, { id: 'RewardRecord', description: 'The rewards of a finished workflow.' });
  ensure(AuditedToolSchema, { id: 'AnthropicTool', description: 'An Anthropic tool definition to audit.' });
  ensure(ToolDefinitionViewSchema, {
    id: 'ToolDefinition',
    description: 'A tool as models see it (Anthropic format).',
  });
  ensure(ToolAuditRequestSchema, {
    id: 'ToolAuditRequest',
    description: 'The tool definitions to audit.',
    examples: [toolAuditExample],
  });
  ensure(AuditFindingSchema, { id: 'ToolAuditFinding', description: 'One detector match in one description.' });
  ensure(ToolAuditSchema, { id: 'ToolAudit', description: 'The audit of one tool: counts and tier.' });
  ensure(ToolAuditReportSchema, {
    id: 'ToolAuditReport',
    description: 'The description audit of a set of tools.',
    examples: [auditTools(toolAuditExample.tools)],
  });
  ensure(CorpusViewSchema, { id: 'Corpus', description: 'A retrieval corpus and what it holds.' });
  ensure(NewCorpusSchema, { id: 'NewCorpus', description: 'A corpus to create.', examples: [corpusExample] });
  ensure(NewDocumentsSchema, {
    id: 'NewDocuments',
    description: 'Documents to add to a corpus.',
    examples: [documentsExample],
  });
  ensure(AgentViewSchema, { id: 'Agent', description: 'A version of a registered agent.' });
  ensure(NewAgentSchema, { id: 'NewAgent', description: 'An agent to register.', examples: [agentExample] });
  ensure(ChunkHitSchema, { id: 'ChunkHit', description: 'A chunk that matched a search, with its BM25 score.' });
}

/** Per route: zod → JSON Schema, then a description (and headers) on every response. */
const transform: SwaggerTransform = (input) => {
  const result = jsonSchemaTransform(input);
  if (!result.schema) return result; // a route without a schema
  const { responseDescriptions = {} } = input.schema ?? {};
  const schema = result.schema as Json & { response?: Record<string, Json> };
  delete schema.responseDescriptions;
  for (const [status, response] of Object.entries(schema.response ?? {})) {
    const shared = ERROR_RESPONSES[status];
    const description =
      responseDescriptions[Number(status)] ?? (response.description as string | undefined) ?? shared?.description;
    (schema.response as Record<string, Json>)[status] = {
      ...response,
      ...(description === undefined ? {} : { description }),
      ...(shared?.headers === undefined ? {} : { headers: shared.headers }),
    };
  }
  return result;
};

function* objectsIn(value: unknown): Generator<Json> {
  if (value === null || typeof value !== 'object') return;
  if (!Array.isArray(value)) yield value as Json;
  for (const child of Object.values(value)) yield* objectsIn(child);
}

const SCHEMA_REF = '#/components/schemas/';

function refsIn(value: unknown): string[] {
  const names: string[] = [];
  for (const node of objectsIn(value)) {
    if (typeof node.$ref === 'string' && node.$ref.startsWith(SCHEMA_REF))
      names.push(node.$ref.slice(SCHEMA_REF.length));
  }
  return names;
}

/**
 * The zod transform emits every registered schema twice (`X` for responses, `XInput` for requests)
 * whether used or not. Keeps the used ones, and names an input-only one `X`: a definition is a
 * `WorkflowDefinition`, not a `WorkflowDefinitionInput`.
 */
function tidyComponents(document: Json): Json {
  const components = document.components as Json & { schemas: Record<string, Json> };
  const used = new Set<string>();
  const queue = refsIn(document.paths);
  for (let name = queue.pop(); name !== undefined; name = queue.pop()) {
    if (used.has(name)) continue;
    used.add(name);
    queue.push(...refsIn(components.schemas[name]));
  }
  const rename = new Map<string, string>();
  for (const name of used) {
    const base = name.replace(/Input$/, '');
    if (base !== name && !used.has(base)) rename.set(name, base);
  }
  const schemas: Record<string, Json> = {};
  for (const name of [...used].sort()) schemas[rename.get(name) ?? name] = components.schemas[name] as Json;
  const tidy = { ...document, components: { ...components, schemas } };
  for (const node of objectsIn(tidy)) {
    if (typeof node.$ref !== 'string' || !node.$ref.startsWith(SCHEMA_REF)) continue;
    const target = rename.get(node.$ref.slice(SCHEMA_REF.length));
    if (target !== undefined) node.$ref = `${SCHEMA_REF}${target}`;
  }
  return tidy;
}

/** A component's first example becomes the example of a request body that is exactly that component. */
function bodyExamples(document: Json): void {
  const schemas = (document.components as { schemas: Record<string, Json> }).schemas;
  for (const node of objectsIn(document.paths)) {
    const media = (node.requestBody as { content?: Record<string, Json> } | undefined)?.content;
    for (const entry of Object.values(media ?? {})) {
      const ref = (entry.schema as Json | undefined)?.$ref;
      const examples = typeof ref === 'string' ? schemas[ref.slice(SCHEMA_REF.length)]?.examples : undefined;
      if (Array.isArray(examples) && entry.example === undefined) entry.example = examples[0];
    }
  }
}

const transformObject: SwaggerTransformObject = (input) => {
  const document = tidyComponents(jsonSchemaTransformObject(input) as Json);
  bodyExamples(document);
  return document;
};

export const swaggerOptions: FastifyDynamicSwaggerOptions = {
  openapi: {
    openapi: '3.1.0',
    info: {
      title: 'baton',
      version: '0.1.0',
      description: 'Runs LLM agent workflows durably, with full observability.',
    },
    // Relative, so "Try it out" in Swagger UI calls whichever host served the page.
    servers: [{ url: '/' }],
    components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'workflows', description: 'Submit, inspect and cancel workflow runs' },
      { name: 'events', description: 'Workflow events (JSON pages or SSE)' },
      { name: 'cache', description: 'Response cache: stats, inspection, busting' },
      { name: 'metrics', description: 'Efficiency records, rewards and feedback' },
      { name: 'traces', description: 'Traces and spans of workflow runs (loki-mode shape)' },
      {
        name: 'tools',
        description: 'Agent tools: the built-in tools with their audit, the description audit, exploration as a node',
      },
      { name: 'corpora', description: 'Retrieval corpora: documents chunked and searched by BM25 (SQLite FTS5)' },
      { name: 'agents', description: 'The agent registry: named, versioned agent configs workflows refer to' },
      {
        name: 'analytics',
        description:
          'How models and tools are used: retrieval engagement, tool and model analytics, selection strategies compared',
      },
      { name: 'dashboard', description: 'Key metrics, trends, patterns and evaluation axes over a rolling window' },
      { name: 'routing', description: 'Complexity classification, allocation and the model catalog' },
      { name: 'health', description: 'Probes' },
    ],
  },
  transform,
  transformObject,
};
