import { describe, expect, it } from 'vitest';
import { allEvents, severity, submit } from '../support/api-fixtures.js';
import { useAnthropicTestApp, waitForStatus } from '../support/build-app.js';

/**
 * Workflow-level reflection calls go through the response cache like every other model call
 * (docs/design.md#caching): the same failure of the same inputs asks the same question, so a second identical run
 * is served its reflection from the cache. The attempt number, the error and the inputs are in the
 * key, so a cached answer never repeats past the attempt budget.
 */
const app = useAnthropicTestApp();

function definition(cache: boolean) {
  return {
    name: `reflect-cache-${cache}`,
    agents: {
      a: {
        model: 'sim/sonnet',
        simulate: { responses: [{ json: { severity: 'catastrophic' } }, { json: { severity: 'catastrophic' } }] },
      },
    },
    root: {
      type: 'prompt',
      name: 'rate',
      agent: 'a',
      user: 'Rate it',
      responseFormat: severity,
      enableReflection: false,
    },
    options: { cache, reflection: { enabled: true, maxAttempts: 2 } },
  };
}

async function run(body: unknown) {
  const res = await submit(app.t.app, body);
  expect(res.statusCode).toBe(202);
  const id = res.json().id as string;
  const done = await waitForStatus(app.t.app, id);
  // Both attempts break the schema: the node fails after maxAttempts, cached reflection or not.
  expect(done.status).toBe('failed');
  expect(done.error).toMatchObject({ code: 'VALIDATION_FAILED' });
  return allEvents(app.t.app, id);
}

const reflectionCalls = (events: Awaited<ReturnType<typeof run>>) =>
  events.filter((e) => e.type === 'agentPromptStart' && e.payload.purpose === 'reflection');

describe('reflection calls and the response cache', () => {
  it('serves an identical reflection from the cache', async () => {
    const first = await run(definition(true));
    expect(reflectionCalls(first)).toHaveLength(1);
    // Looked up: the attempt, the reflection and the retry each missed once (the retry asks what
    // the attempt asked: the default reflection answer revises nothing).
    const misses = first.filter((e) => e.type === 'cacheMiss').map((e) => e.payload.key);
    expect(misses).toHaveLength(3);
    expect(misses[2]).toBe(misses[0]);

    const second = await run(definition(true));
    expect(reflectionCalls(second)).toHaveLength(0);
    const hits = second.filter((e) => e.type === 'cacheHit').map((e) => e.payload.key);
    // Only the reflection is a hit: answers that broke the schema are never stored. The node still
    // stops after its two attempts: a cached reflection does not buy more of them.
    expect(hits).toEqual([misses[1]]);
    expect(second.filter((e) => e.type === 'stepStart')).toHaveLength(2);
    expect(second.filter((e) => e.type === 'reflectionEnd')).toHaveLength(1);
  });

  it('asks the provider again with options.cache false', async () => {
    await run(definition(false));
    const again = await run(definition(false));
    expect(reflectionCalls(again)).toHaveLength(1);
    expect(again.filter((e) => e.type === 'cacheHit')).toHaveLength(0);
  });
});
