import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { newId } from '../../src/domain/ids.js';
import type { ReflectionEntry } from '../../src/domain/reflection.js';
import { definition, prompt, submit } from '../support/api-fixtures.js';
import { waitForStatus } from '../support/build-app.js';

const KEY_A = 'key-of-tenant-a-0123456789';
const KEY_B = 'key-of-tenant-b-9876543210';
const asA = { authorization: `Bearer ${KEY_A}` };
const asB = { authorization: `Bearer ${KEY_B}` };

let app: FastifyInstance;
let deps: Deps;
let workflowId: string;
let entries: ReflectionEntry[];

beforeAll(async () => {
  const config = loadConfig({ DATABASE_PATH: ':memory:', LOG_LEVEL: 'silent', API_KEYS: `a:${KEY_A},b:${KEY_B}` });
  deps = await createDeps(config);
  app = await buildApp(deps);
  await app.ready();
  await deps.executor.start();

  const res = await submit(app, definition(prompt('draft')), asA);
  expect(res.statusCode).toBe(202);
  workflowId = res.json().id;
  // Any end will do: the test needs the workflow and its node rows, not a particular engine outcome.
  await waitForStatus(app, workflowId, undefined, 5_000, asA);
  const node = (await deps.store.nodes(workflowId)).find((n) => n.name === 'draft');
  if (!node) throw new Error('no draft node');

  const base = {
    workflowId,
    tenantId: 'a',
    nodeId: node.id,
    nodeName: 'draft',
    error: { code: 'VALIDATION_FAILED', message: 'missing severity' },
  };
  entries = [
    {
      ...base,
      id: newId('rf'),
      attempt: 1,
      timestamp: Date.UTC(2024, 0, 1),
      level: 'workflow',
      reason: 'add a hint',
      resolution: {
        decision: 'retry',
        revisedPromptData: true,
        revisions: { promptData: { hint: 'include severity', apiKey: 'sk-secret-value-1234567890' } },
      },
      success: true,
    },
    {
      ...base,
      id: newId('rf'),
      attempt: 2,
      timestamp: Date.UTC(2024, 0, 1, 0, 0, 1),
      level: 'prompt',
      reason: 'schema miss',
      resolution: { decision: 'abort' },
      success: null,
    },
  ];
  // The engine is not wired to write reflections here: the entries go in through the store port.
  await deps.store.commit({ reflections: entries });
});

afterAll(async () => {
  await app.close();
  await deps.close();
});

describe('GET /v1/workflows/:id/reflections', () => {
  it('returns the history oldest first, with ISO timestamps and secrets redacted', async () => {
    const res = await app.inject({ method: 'GET', url: `/v1/workflows/${workflowId}/reflections`, headers: asA });
    expect(res.statusCode).toBe(200);
    const { items } = res.json();
    expect(items).toEqual([
      {
        id: entries[0]?.id,
        workflowId,
        nodeId: entries[0]?.nodeId,
        nodeName: 'draft',
        attempt: 1,
        timestamp: '2024-01-01T00:00:00.000Z',
        level: 'workflow',
        reason: 'add a hint',
        error: { code: 'VALIDATION_FAILED', message: 'missing severity' },
        resolution: {
          decision: 'retry',
          revisedPromptData: true,
          revisions: { promptData: { hint: 'include severity', apiKey: '[REDACTED]' } },
        },
        success: true,
      },
      {
        id: entries[1]?.id,
        workflowId,
        nodeId: entries[1]?.nodeId,
        nodeName: 'draft',
        attempt: 2,
        timestamp: '2024-01-01T00:00:01.000Z',
        level: 'prompt',
        reason: 'schema miss',
        error: { code: 'VALIDATION_FAILED', message: 'missing severity' },
        resolution: { decision: 'abort' },
        success: null,
      },
    ]);
    expect(items[0]).not.toHaveProperty('tenantId');
  });

  it('answers an empty list for a workflow without reflections', async () => {
    const res = await submit(app, definition(prompt('other')), asA);
    const id = res.json().id;
    const list = await app.inject({ method: 'GET', url: `/v1/workflows/${id}/reflections`, headers: asA });
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual({ items: [] });
  });

  it("is 404 for another tenant's workflow and for an unknown id, 400 for a malformed id", async () => {
    const other = await app.inject({ method: 'GET', url: `/v1/workflows/${workflowId}/reflections`, headers: asB });
    expect(other.statusCode).toBe(404);
    expect(other.json().code).toBe('NOT_FOUND');
    const missing = await app.inject({ method: 'GET', url: '/v1/workflows/wf_missing/reflections', headers: asA });
    expect(missing.statusCode).toBe(404);
    const bad = await app.inject({ method: 'GET', url: '/v1/workflows/a.b/reflections', headers: asA });
    expect(bad.statusCode).toBe(400);
    const anonymous = await app.inject({ method: 'GET', url: `/v1/workflows/${workflowId}/reflections` });
    expect(anonymous.statusCode).toBe(401);
  });
});
