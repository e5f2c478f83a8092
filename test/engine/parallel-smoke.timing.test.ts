import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definition, prompt, submit } from '../support/api-fixtures.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';

/**
 * The one real-time smoke test of parallelism: on the system clock, two 300 ms simulated steps in a
 * `parallel` node overlap for real. Its bounds are wall-clock on purpose — this is the check that the
 * branches overlap in real time, not only on an injected clock — so it runs in the `timing` project
 * (last and alone, see vitest.config.ts). What parallelism means otherwise (both calls in flight
 * before either answers, one latency of clock time) is tested on the manual clock in
 * test/api/workflows.test.ts and test/engine/engine-timing.test.ts.
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('parallel branches in real time', () => {
  it('two 300 ms steps take well under 600 ms', async () => {
    const started = Date.now();
    const res = await submit(
      t.app,
      definition(
        { type: 'parallel', name: 'fan', steps: [prompt('left'), prompt('right')] },
        { agents: { a: { model: 'sim/sonnet', simulate: { latencyMs: 300 } } } },
      ),
    );
    const done = await waitForStatus(t.app, res.json().id);
    const wall = Date.now() - started;
    expect(done.status).toBe('completed');
    expect(Object.keys(done.output as object).sort()).toEqual(['left', 'right']);
    expect(done.durationMs as number).toBeGreaterThanOrEqual(290);
    expect(done.durationMs as number).toBeLessThan(550);
    expect(wall).toBeLessThan(600);
  });
});
