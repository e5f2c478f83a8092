import { afterAll, beforeAll, expect, it } from 'vitest';
import { submit } from '../support/api-fixtures.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';

/**
 * More than 10 children under one run logged MaxListenersExceededWarning — each
 * child (and each branch of a wide parallel) hung an abort listener on one shared signal. A run with
 * 12 declared children and 12 parallel prompts raises no process warning at all.
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t.close();
});

const WIDE = 12;

it(`a run with ${WIDE} concurrent children and ${WIDE} parallel prompts raises no process warning`, async () => {
  const slow = { model: 'sim/sonnet', simulate: { latencyMs: 50 } };
  const children = Array.from({ length: WIDE }, (_, i) => ({
    type: 'workflow',
    name: `child${i}`,
    definition: { name: `child${i}`, root: { type: 'prompt', name: 'work', agent: 'a', user: `child ${i}` } },
  }));
  const prompts = Array.from({ length: WIDE }, (_, i) => ({
    type: 'prompt',
    name: `p${i}`,
    agent: 'a',
    user: `p ${i}`,
  }));
  const body = {
    name: 'wide',
    agents: { a: slow },
    options: { limits: { maxChildren: WIDE } },
    root: {
      type: 'sequence',
      name: 'all',
      steps: [
        { type: 'parallel', name: 'kids', steps: children },
        { type: 'parallel', name: 'prompts', steps: prompts },
      ],
    },
  };
  const warnings: string[] = [];
  const listener = (warning: Error & { code?: string }) => warnings.push(`${warning.name}: ${warning.message}`);
  process.on('warning', listener);
  try {
    const res = await submit(t.app, body);
    expect(res.statusCode, res.body).toBe(202);
    const view = await waitForStatus(t.app, res.json().id, undefined, 20_000);
    expect(view.status).toBe('completed');
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', listener);
  }
  expect(warnings).toEqual([]);
});
