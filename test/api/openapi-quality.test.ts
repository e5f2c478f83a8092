import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/build-app.js';

/**
 * Walks the served OpenAPI document for what a new user and a client generator trip over:
 * missing operation ids, undescribed responses and parameters, inlined shared shapes, error
 * statuses a route can answer but does not declare.
 */

type Json = Record<string, any>;
interface Operation {
  method: string;
  path: string;
  op: Json;
}

let t: TestApp;
let doc: Json;
let operations: Operation[];

beforeAll(async () => {
  t = await buildTestApp();
  doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  operations = Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ method, path, op: op as Json })),
  );
});
afterAll(async () => {
  await t.close();
});

const label = ({ method, path }: Operation): string => `${method.toUpperCase()} ${path}`;

/** Every object in the document with its JSON pointer-ish location. */
function* walk(value: unknown, at = '#'): Generator<[string, Json]> {
  if (value === null || typeof value !== 'object') return;
  if (!Array.isArray(value)) yield [at, value as Json];
  for (const [key, child] of Object.entries(value)) yield* walk(child, `${at}/${key}`);
}

describe('OpenAPI document quality', () => {
  it('is OpenAPI 3.1 with a relative server, so Swagger UI works from any host', () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.servers).toEqual([{ url: '/' }]);
  });

  it('gives every operation a unique camelCase operationId', () => {
    const ids = operations.map((o) => o.op.operationId);
    for (const o of operations) expect(o.op.operationId, label(o)).toMatch(/^[a-z][A-Za-z]+$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(
      expect.arrayContaining([
        'submitWorkflow',
        'listWorkflows',
        'getWorkflow',
        'getWorkflowTree',
        'cancelWorkflow',
        'listWorkflowEvents',
        'getCacheStats',
        'listTools',
        'auditTools',
      ]),
    );
  });

  it('describes every response (no "Default Response")', () => {
    for (const o of operations) {
      for (const [status, response] of Object.entries(o.op.responses as Record<string, Json>)) {
        expect(response.description, `${label(o)} ${status}`).toEqual(expect.any(String));
        expect(response.description, `${label(o)} ${status}`).not.toBe('Default Response');
      }
    }
  });

  it('describes every query parameter', () => {
    for (const o of operations) {
      for (const param of (o.op.parameters ?? []) as Json[]) {
        if (param.in !== 'query') continue;
        expect(param.description, `${label(o)} ?${param.name}`).toEqual(expect.any(String));
      }
    }
  });

  it('has no nullable without a type (and, being 3.1, no nullable at all)', () => {
    for (const [at, node] of walk(doc)) {
      if ('nullable' in node && typeof node.nullable === 'boolean') expect.fail(`nullable at ${at}`);
    }
  });

  it('names the shared shapes as component schemas', () => {
    const names = Object.keys(doc.components.schemas);
    expect(names).toEqual(
      expect.arrayContaining([
        'WorkflowDefinition',
        'WorkflowNode',
        'WorkflowView',
        'WorkflowSummary',
        'NodeView',
        'Error',
        'Trace',
        'TraceSummary',
        'Span',
        'AgentSpan',
        'GenerationSpan',
        'FunctionSpan',
        'GuardrailSpan',
        'HandoffSpan',
        'CustomSpan',
        'EfficiencyRecord',
        'RewardRecord',
        'AnthropicTool',
        'ToolAuditRequest',
        'ToolAuditReport',
        'ToolAudit',
        'ToolAuditFinding',
        'ToolDefinition',
      ]),
    );
    // Every component is used, and every reference resolves.
    const text = JSON.stringify(doc);
    for (const name of names) expect(text, name).toContain(`"#/components/schemas/${name}"`);
    for (const ref of new Set(text.match(/"#\/components\/schemas\/[^"]+"/g) ?? [])) {
      expect(names, ref).toContain(ref.slice('"#/components/schemas/'.length, -1));
    }
  });

  it('references the components instead of inlining them', () => {
    const json = (o: Json, status: string) => o.responses[status].content['application/json'].schema;
    const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
    const paths = doc.paths;
    expect(paths['/v1/workflows'].post.requestBody.content['application/json'].schema).toEqual(
      ref('WorkflowDefinition'),
    );
    expect(json(paths['/v1/workflows/{id}'].get, '200')).toEqual(ref('WorkflowView'));
    expect(json(paths['/v1/workflows'].get, '200').properties.items.items).toEqual(ref('WorkflowSummary'));
    expect(json(paths['/v1/traces/{traceId}'].get, '200')).toEqual(ref('Trace'));
    expect(json(paths['/v1/traces'].get, '200').properties.items.items).toEqual(ref('TraceSummary'));
    expect(doc.components.schemas.Trace.properties.spans.items).toEqual(ref('Span'));
    expect(json(paths['/v1/metrics/efficiency'].get, '200').properties.records.items).toEqual(ref('EfficiencyRecord'));
    expect(json(paths['/v1/rewards'].get, '200').properties.records.items).toEqual(ref('RewardRecord'));
    expect(paths['/v1/tools/audit'].post.requestBody.content['application/json'].schema).toEqual(
      ref('ToolAuditRequest'),
    );
    expect(json(paths['/v1/tools/audit'].post, '200')).toEqual(ref('ToolAuditReport'));
    for (const o of operations) {
      for (const [status, response] of Object.entries(o.op.responses as Record<string, Json>)) {
        if (Number(status) >= 400) expect(response.content['application/json'].schema, label(o)).toEqual(ref('Error'));
      }
    }
  });

  it('types Error.details as one shape: an array of { path, message }', () => {
    const details = doc.components.schemas.Error.properties.details;
    expect(details.type).toBe('array');
    expect(details.items.required).toEqual(['path', 'message']);
    expect(details.items.properties.path.type).toBe('string');
    expect(details.items.properties.message.type).toBe('string');
  });

  it('declares 401 and 429 on /v1, 404 where an id is in the path, 413 and 415 where there is a body', () => {
    for (const o of operations) {
      const statuses = Object.keys(o.op.responses);
      if (o.path.startsWith('/v1/')) expect(statuses, label(o)).toEqual(expect.arrayContaining(['401', '429']));
      if (/\{[^}]+\}/.test(o.path)) expect(statuses, label(o)).toContain('404');
      if (o.op.requestBody) expect(statuses, label(o)).toEqual(expect.arrayContaining(['413', '415']));
    }
  });

  it('declares the 409 of cancelling a finished workflow', () => {
    expect(Object.keys(doc.paths['/v1/workflows/{id}/cancel'].post.responses)).toContain('409');
  });
});
