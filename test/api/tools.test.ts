import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolAuditExample } from '../../src/api/http/examples.js';
import { AUDIT_LIMITS } from '../../src/tools/description-audit.js';
import { buildTestApp, type TestApp } from '../support/build-app.js';

/** GET /v1/tools and POST /v1/tools/audit (docs/design.md#agent-tools, docs/design.md#http-api-conventions). */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t.close();
});

type Json = Record<string, any>;
const audit = (body: unknown) =>
  t.app.inject({
    method: 'POST',
    url: '/v1/tools/audit',
    headers: { 'content-type': 'application/json' },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
const tool = (name: string, description: string, input_schema: Json = { type: 'object' }) => ({
  name,
  description,
  input_schema,
});

describe('POST /v1/tools/audit', () => {
  it('audits the documented example: the seed’s two biased descriptions, one clean tool', async () => {
    const res = await audit(toolAuditExample);
    expect(res.statusCode, res.body).toBe(200);
    const report = res.json();
    expect(report.findings).toEqual([
      { tool: 'search_skills', path: 'description', pattern: 'narrative-voice', match: 'you might', index: 28 },
      {
        tool: 'create_skill',
        path: 'input_schema.properties.steps.description',
        pattern: 'cot-imperative',
        match: 'Step-by-step',
        index: 0,
      },
    ]);
    expect(report.tools.map((a: Json) => [a.tool, a.tier])).toEqual([
      ['search_skills', 1],
      ['create_skill', 1],
      ['retrieve', 0],
    ]);
    expect(report.totals).toEqual({
      tools: 3,
      descriptions_scanned: 7,
      biased_descriptions: 2,
      finding_count: 2,
      bias_rate: 2 / 7,
    });
    expect(report.by_pattern).toEqual({
      'cot-imperative': 1,
      'narrative-voice': 1,
      'verbose-hedging': 0,
      'meta-reference': 0,
    });
    expect(report.findings_truncated).toBe(false);
  });

  it('holds word boundaries and curly apostrophes over HTTP', async () => {
    const res = await audit({
      tools: [tool('a', 'An unusually degenerally clean text.'), tool('b', 'You’ll want to pass it; usually once.')],
    });
    expect(res.json().findings.map((f: Json) => [f.tool, f.match])).toEqual([
      ['b', 'You’ll want to'],
      ['b', 'usually'],
    ]);
  });

  it('accepts the other Anthropic tool fields and a tool without a description', async () => {
    const res = await audit({
      tools: [{ name: 'x', input_schema: { type: 'object' }, type: 'custom', cache_control: { type: 'ephemeral' } }],
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().tools[0]).toMatchObject({ tool: 'x', tier: 0, descriptions_scanned: 0 });
  });

  const refused: Array<[string, unknown, string]> = [
    ['no tools', { tools: [] }, 'tools'],
    [
      `more than ${AUDIT_LIMITS.maxTools} tools`,
      { tools: Array.from({ length: AUDIT_LIMITS.maxTools + 1 }, (_, i) => tool(`t${i}`, 'T.')) },
      'tools',
    ],
    ['a misspelt field', { tools: [{ ...tool('a', 'A.'), descripton: 'x' }] }, 'tools.0.descripton'],
    ['an unknown top-level field', { tools: [tool('a', 'A.')], behavioural: [] }, 'behavioural'],
    ['no input_schema', { tools: [{ name: 'a', description: 'A.' }] }, 'tools.0.input_schema'],
    ['a name Anthropic refuses', { tools: [tool('a tool', 'A.')] }, 'tools.0.name'],
    ['a repeated name', { tools: [tool('a', 'A.'), tool('a', 'B.')] }, 'tools.1.name'],
    [
      'a tool description too long',
      { tools: [tool('a', 'x'.repeat(AUDIT_LIMITS.maxDescriptionLength + 1))] },
      'tools.0.description',
    ],
    [
      'a parameter description too long',
      {
        tools: [
          tool('a', 'A.', {
            properties: { q: { description: 'x'.repeat(AUDIT_LIMITS.maxDescriptionLength + 1) } },
          }),
        ],
      },
      'tools.0.input_schema.properties.q.description',
    ],
  ];
  for (const [what, body, path] of refused) {
    it(`refuses ${what} with a 400 naming ${path}`, async () => {
      const res = await audit(body);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
      expect(res.json().details.map((d: Json) => d.path)).toContain(path);
    });
  }

  it('refuses a schema nested too deep with a 400, however deep', async () => {
    for (const depth of [AUDIT_LIMITS.maxSchemaDepth + 1, 10_000]) {
      const nested = `${'{"items":'.repeat(depth)}{}${'}'.repeat(depth)}`;
      const res = await audit(`{"tools":[{"name":"a","description":"A.","input_schema":${nested}}]}`);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().message).toMatch(/nested deeper than/);
    }
  });

  it('answers the largest body it accepts at once, counting every finding and listing the first ones', async () => {
    const loud = 'usually '.repeat(AUDIT_LIMITS.maxDescriptionLength / 8);
    const body = { tools: Array.from({ length: 100 }, (_, i) => tool(`t${i}`, loud)) };
    const started = Date.now();
    const res = await audit(body);
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    expect(Date.now() - started).toBeLessThan(2_000);
    const report = res.json();
    expect(report.totals.finding_count).toBe(100 * (AUDIT_LIMITS.maxDescriptionLength / 8));
    expect(report.findings).toHaveLength(AUDIT_LIMITS.maxListedFindings);
    expect(report.findings_truncated).toBe(true);
  });

  it('refuses a body over the body limit with a 413', async () => {
    const body = { tools: Array.from({ length: 120 }, (_, i) => tool(`t${i}`, 'x'.repeat(9_000))) };
    expect((await audit(body)).statusCode).toBe(413);
  });
});

describe('GET /v1/tools', () => {
  it('lists every built-in tool with its definition and its own audit, all Tier 0', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/tools' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    const names = t.deps.tools.names();
    expect(body.items.map((i: Json) => i.definition.name)).toEqual(names);
    for (const item of body.items) {
      expect(item.definition).toEqual(t.deps.tools.definitions([item.definition.name])[0]);
      expect(item.audit).toMatchObject({ tool: item.definition.name, tier: 0, finding_count: 0, findings: [] });
    }
    expect(body.totals).toMatchObject({ tools: names.length, finding_count: 0, bias_rate: 0 });
  });
});
