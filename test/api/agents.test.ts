import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_AGENTS_PER_TENANT, MAX_VERSIONS_PER_AGENT } from '../../src/domain/agents.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';

/**
 * The agent registry over the real app and SQLite (docs/design.md#workflow-definitions,
 * docs/design.md#http-api-conventions): CRUD, versions, tenants, runs, limits.
 */
const KEY_A = 'key-of-tenant-a-0123456789';
const KEY_B = 'key-of-tenant-b-9876543210';
const KEY_C = 'key-of-tenant-c-5555555555';
const asA = { authorization: `Bearer ${KEY_A}` };
const asB = { authorization: `Bearer ${KEY_B}` };
const asC = { authorization: `Bearer ${KEY_C}` };

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ API_KEYS: `a:${KEY_A},b:${KEY_B},c:${KEY_C}` });
});
afterAll(async () => {
  await t.close();
});

type Headers = Record<string, string>;
const send = (method: 'POST' | 'PUT', url: string, payload: unknown, headers: Headers = asA) =>
  t.app.inject({ method, url, payload: payload as Record<string, unknown>, headers });
const get = (url: string, headers: Headers = asA) => t.app.inject({ method: 'GET', url, headers });
const del = (url: string, headers: Headers = asA) => t.app.inject({ method: 'DELETE', url, headers });

const config = (system: string) => ({ model: 'sim/haiku', role: 'development', system });
const workflowUsing = (agent: unknown, agents: Record<string, unknown> = {}) => ({
  name: 'registry-run',
  agents,
  root: { type: 'sequence', name: 'main', steps: [{ type: 'prompt', name: 'work', agent, user: 'Do it' }] },
});

interface SpanJson {
  type: string;
  to_agent?: string;
  agent_version?: number;
  [key: string]: unknown;
}
async function handoffOf(traceId: string, headers: Headers = asA): Promise<SpanJson> {
  const trace = (await get(`/v1/traces/${traceId}`, headers)).json() as { spans: SpanJson[] };
  const span = trace.spans.find((s) => s.type === 'handoff_span');
  if (!span) throw new Error('no handoff span');
  return span;
}

describe('agent registry: create, read, version, retire', () => {
  it('keeps every version; PUT adds n + 1, DELETE retires the name, a new POST continues the numbering', async () => {
    const created = await send('POST', '/v1/agents', { name: 'coder', config: config('v1') });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.headers.location).toBe('/v1/agents/coder');
    expect(created.json()).toEqual({
      name: 'coder',
      version: 1,
      role: 'development',
      config: config('v1'),
      createdAt: expect.any(String),
    });

    const again = await send('POST', '/v1/agents', { name: 'coder', config: config('other') });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('"coder" exists') });

    const put = await send('PUT', '/v1/agents/coder', { config: config('v2') });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({ name: 'coder', version: 2, config: config('v2') });

    expect((await get('/v1/agents/coder')).json()).toMatchObject({ version: 2, config: { system: 'v2' } });
    expect((await get('/v1/agents/coder?version=1')).json()).toMatchObject({ version: 1, config: { system: 'v1' } });
    expect((await get('/v1/agents/coder?version=9')).statusCode).toBe(404);
    const versions = (await get('/v1/agents/coder/versions')).json() as { items: Array<{ version: number }> };
    expect(versions.items.map((v) => v.version)).toEqual([1, 2]);

    const list = (await get('/v1/agents')).json() as { items: Array<{ name: string; version: number }> };
    expect(list.items).toEqual([expect.objectContaining({ name: 'coder', version: 2 })]);
    expect((await get('/v1/agents?role=review')).json()).toEqual({ items: [], nextCursor: null });

    expect((await del('/v1/agents/coder')).statusCode).toBe(204);
    expect((await get('/v1/agents/coder')).statusCode).toBe(404);
    expect((await del('/v1/agents/coder')).statusCode).toBe(404);
    expect((await send('PUT', '/v1/agents/coder', { config: config('v3') })).statusCode).toBe(404);
    expect((await get('/v1/agents')).json()).toEqual({ items: [], nextCursor: null });

    const reborn = await send('POST', '/v1/agents', { name: 'coder', config: config('v3') });
    expect(reborn.statusCode).toBe(201);
    expect(reborn.json()).toMatchObject({ version: 3 });
    await del('/v1/agents/coder');
  });

  it('validates names and configs with the definition schemas (400 naming the field)', async () => {
    const badName = await send('POST', '/v1/agents', { name: '../etc', config: config('x') });
    expect(badName.statusCode).toBe(400);
    expect(badName.json().details[0].path).toBe('name');
    const badConfig = await send('POST', '/v1/agents', { name: 'ok', config: { model: 'sim/haiku', colour: 'red' } });
    expect(badConfig.statusCode).toBe(400);
    expect(JSON.stringify(badConfig.json().details)).toContain('colour');
    const badRole = await send('POST', '/v1/agents', { name: 'ok', config: { role: 'boss' } });
    expect(badRole.statusCode).toBe(400);
    expect(badRole.json().details[0].path).toBe('config.role');
  });

  it('pages the list by name', async () => {
    for (const name of ['p-a', 'p-b', 'p-c']) await send('POST', '/v1/agents', { name, config: config(name) }, asC);
    const first = (await get('/v1/agents?limit=2', asC)).json() as {
      items: Array<{ name: string }>;
      nextCursor: string;
    };
    expect(first.items.map((a) => a.name)).toEqual(['p-a', 'p-b']);
    const second = (await get(`/v1/agents?limit=2&cursor=${first.nextCursor}`, asC)).json();
    expect(second).toMatchObject({ items: [{ name: 'p-c' }], nextCursor: null });
    expect((await get('/v1/agents?cursor=garbage', asC)).statusCode).toBe(400);
    for (const name of ['p-a', 'p-b', 'p-c']) await del(`/v1/agents/${name}`, asC);
  });
});

describe('agent registry: tenants', () => {
  it("answers 404 for another tenant's agent, and a workflow cannot name it", async () => {
    await send('POST', '/v1/agents', { name: 'private', config: config('mine') });
    expect((await get('/v1/agents/private', asB)).statusCode).toBe(404);
    expect((await get('/v1/agents/private/versions', asB)).statusCode).toBe(404);
    expect((await send('PUT', '/v1/agents/private', { config: config('theirs') }, asB)).statusCode).toBe(404);
    expect((await del('/v1/agents/private', asB)).statusCode).toBe(404);
    expect((await get('/v1/agents', asB)).json()).toEqual({ items: [], nextCursor: null });
    // B may register the same name: names are per tenant.
    expect((await send('POST', '/v1/agents', { name: 'private', config: config('b') }, asB)).statusCode).toBe(201);
    expect((await get('/v1/agents/private')).json()).toMatchObject({ config: { system: 'mine' } });
    await del('/v1/agents/private', asB);

    const res = await send('POST', '/v1/workflows', workflowUsing('private'), asB);
    expect(res.statusCode).toBe(400);
    expect(res.json().details).toEqual([
      { path: 'root.steps.0.agent', message: 'unknown agent "private": not in agents and not a registered agent' },
    ]);
    await del('/v1/agents/private');
  });
});

describe('agent registry: runs', () => {
  it('a run records the version it used and keeps its config after a PUT; a new run takes the new version', async () => {
    await send('POST', '/v1/agents', {
      name: 'writer',
      config: { model: 'sim/haiku', system: 'first', simulate: { responses: [{ text: 'from v1' }] } },
    });
    const first = await send('POST', '/v1/workflows', workflowUsing('writer'));
    expect(first.statusCode, first.body).toBe(202);
    const done = await waitForStatus(t.app, first.json().id, undefined, 5_000, asA);
    expect(done.status).toBe('completed');
    expect(done.output).toBe('from v1');
    expect(await handoffOf(first.json().traceId)).toMatchObject({ to_agent: 'writer', agent_version: 1 });

    await send('PUT', '/v1/agents/writer', {
      config: { model: 'sim/haiku', system: 'second', simulate: { responses: [{ text: 'from v2' }] } },
    });
    // The stored definition holds the config the run was submitted with (what a resume runs).
    const stored = await t.deps.store.get('a', first.json().id);
    expect(stored?.definition.agents.writer).toMatchObject({ system: 'first' });
    expect(stored?.definition.root).toMatchObject({ steps: [{ agent: 'writer', resolved: { version: 1 } }] });

    const second = await send('POST', '/v1/workflows', workflowUsing('writer'));
    const done2 = await waitForStatus(t.app, second.json().id, undefined, 5_000, asA);
    expect(done2.output).toBe('from v2');
    expect(await handoffOf(second.json().traceId)).toMatchObject({ agent_version: 2 });
    // Retiring the name keeps old runs readable and intact.
    await del('/v1/agents/writer');
    expect((await t.deps.store.get('a', first.json().id))?.definition.agents.writer).toMatchObject({ system: 'first' });
    expect((await send('POST', '/v1/workflows', workflowUsing('writer'))).statusCode).toBe(400);
  });

  it('definition agents win over registered ones of the same name; child workflows see registered agents', async () => {
    await send('POST', '/v1/agents', {
      name: 'shadowed',
      config: { model: 'sim/haiku', simulate: { responses: [{ text: 'registered' }] } },
    });
    const own = { shadowed: { model: 'sim/haiku', simulate: { responses: [{ text: 'own' }] } } };
    const res = await send('POST', '/v1/workflows', workflowUsing('shadowed', own));
    const done = await waitForStatus(t.app, res.json().id, undefined, 5_000, asA);
    expect(done.output).toBe('own');
    expect((await handoffOf(res.json().traceId)).agent_version).toBeUndefined();

    const nested = await send('POST', '/v1/workflows', {
      name: 'nested',
      root: {
        type: 'workflow',
        name: 'child',
        definition: { name: 'inner', root: { type: 'prompt', name: 'deep', agent: 'shadowed', user: 'Go' } },
      },
    });
    expect(nested.statusCode, nested.body).toBe(202);
    const nestedDone = await waitForStatus(t.app, nested.json().id, undefined, 5_000, asA);
    expect(nestedDone.status).toBe('completed');
    expect(nestedDone.output).toBe('registered');
    await del('/v1/agents/shadowed');
  });

  it('refuses `resolved` in a request and unknown selection candidates, naming the path', async () => {
    const sent = await send('POST', '/v1/workflows', {
      name: 'forged',
      agents: { a: { model: 'sim/haiku' } },
      root: { type: 'prompt', name: 'p', agent: 'a', user: 'x', resolved: { version: 3 } },
    });
    expect(sent.statusCode).toBe(400);
    expect(sent.json().details[0]).toEqual({
      path: 'root.resolved',
      message: 'is set by the service at submission; remove it',
    });

    const select = await send('POST', '/v1/workflows', {
      name: 'select',
      agents: { a: { model: 'sim/haiku', role: 'testing' } },
      root: {
        type: 'prompt',
        name: 'p',
        agent: { select: { role: 'development', candidates: ['a', 'ghost'] } },
        user: 'x',
      },
    });
    expect(select.statusCode).toBe(400);
    expect(select.json().details).toEqual([
      { path: 'root.agent.select.candidates.0', message: '"a" has role "testing", not "development"' },
      {
        path: 'root.agent.select.candidates.1',
        message: 'unknown agent "ghost": not in agents and not a registered agent',
      },
    ]);

    const none = await send('POST', '/v1/workflows', {
      name: 'select',
      root: { type: 'prompt', name: 'p', agent: { select: { role: 'planning' } }, user: 'x' },
    });
    expect(none.statusCode).toBe(400);
    expect(none.json().details).toEqual([
      { path: 'root.agent.select.role', message: 'you have no registered agent with role "planning"' },
    ]);
  });

  it('checks a registered config like a definition agent at submission (unknown tool → 400)', async () => {
    await send('POST', '/v1/agents', { name: 'tooled', config: { model: 'sim/haiku', tools: ['no_such_tool'] } });
    const res = await send('POST', '/v1/workflows', workflowUsing('tooled'));
    expect(res.statusCode).toBe(400);
    expect(res.json().details[0]).toEqual({ path: 'agents.tooled.tools.0', message: 'unknown tool "no_such_tool"' });
    await del('/v1/agents/tooled');
  });
});

describe('agent registry: limits', () => {
  it(`holds at most ${MAX_AGENTS_PER_TENANT} live agents per tenant and ${MAX_VERSIONS_PER_AGENT} versions per name`, async () => {
    for (let i = 0; i < MAX_AGENTS_PER_TENANT; i++) {
      const res = await send('POST', '/v1/agents', { name: `agent-${i}`, config: {} }, asC);
      expect(res.statusCode).toBe(201);
    }
    const over = await send('POST', '/v1/agents', { name: 'one-too-many', config: {} }, asC);
    expect(over.statusCode).toBe(409);
    expect(over.json()).toMatchObject({ code: 'LIMIT_EXCEEDED', message: expect.stringContaining('200 agents') });
    // Retiring one frees a place.
    await del('/v1/agents/agent-0', asC);
    expect((await send('POST', '/v1/agents', { name: 'one-too-many', config: {} }, asC)).statusCode).toBe(201);

    for (let v = 2; v <= MAX_VERSIONS_PER_AGENT; v++) {
      const res = await send('PUT', '/v1/agents/agent-1', { config: { maxTokens: v } }, asC);
      expect(res.statusCode).toBe(200);
    }
    const tooMany = await send('PUT', '/v1/agents/agent-1', { config: {} }, asC);
    expect(tooMany.statusCode).toBe(409);
    expect(tooMany.json()).toMatchObject({ code: 'LIMIT_EXCEEDED', message: expect.stringContaining('100 versions') });
  });
});
