import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definition, prompt, submit } from '../support/api-fixtures.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';

/**
 * One node's stored output is bounded (MAX_NODE_OUTPUT_BYTES, docs/design.md#security): a clear node error above it.
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ MAX_NODE_OUTPUT_BYTES: '2048' });
});
afterAll(async () => {
  await t.close();
});

const answering = (text: string) =>
  definition(prompt('big'), { agents: { a: { model: 'sim/sonnet', simulate: { responses: [{ text }] } } } });

describe('node output cap', () => {
  it('an answer over the cap fails the node with OUTPUT_TOO_LARGE and stores nothing of it', async () => {
    const res = await submit(t.app, answering('é'.repeat(1500)));
    const view = await waitForStatus(t.app, res.json().id);
    expect(view.status).toBe('failed');
    expect(view.error).toMatchObject({ code: 'OUTPUT_TOO_LARGE' });
    expect((view.error as { message: string }).message).toContain('3000 bytes');
    expect(JSON.stringify(view)).not.toContain('ééé');
  });

  it('an answer at the cap is stored', async () => {
    const res = await submit(t.app, answering('x'.repeat(2048)));
    const view = await waitForStatus(t.app, res.json().id);
    expect(view.status).toBe('completed');
    expect((view.output as string).length).toBe(2048);
  });

  it("the simulated model's schema instance is bounded by the same code", async () => {
    const schema = { type: 'array', minItems: 400, items: { type: 'string', minLength: 20 } };
    const res = await submit(t.app, definition(prompt('big', { responseFormat: schema })));
    const view = await waitForStatus(t.app, res.json().id);
    expect(view.error).toMatchObject({ code: 'OUTPUT_TOO_LARGE' });
  });
});
