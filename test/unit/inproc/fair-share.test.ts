import { describe, expect, it } from 'vitest';
import { loadConfig, runningPerTenant } from '../../../src/config.js';
import { createInProcessWorkQueue } from '../../../src/inproc/work-queue.js';

/**
 * Fair places by default: with MAX_RUNNING_WORKFLOWS=20 and the old per-tenant
 * default (200, above the global cap) one tenant's 60 slow workflows held all 20 places and a second
 * tenant's one-step workflow waited for them. The per-tenant default is now at most half of the
 * global cap when several tenants are configured, and a freed place goes first to a waiting tenant
 * below its share (the global cap over the tenants holding or waiting for places).
 */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function gatedHandler() {
  const started: string[] = [];
  const gates = new Map<string, () => void>();
  return {
    started,
    finish: (id: string) => gates.get(id)?.(),
    handler: (id: string) =>
      new Promise<void>((resolve) => {
        started.push(id);
        gates.set(id, resolve);
      }),
  };
}

describe('per-tenant running default', () => {
  const keys = 'a:key-of-tenant-a-0123456789,b:key-of-tenant-b-0123456789';
  it('is half the global cap with several tenants, so a second tenant starts at once', async () => {
    const config = loadConfig({ MAX_RUNNING_WORKFLOWS: '20', API_KEYS: keys });
    expect(runningPerTenant(config)).toBe(10);
    const queue = createInProcessWorkQueue({ concurrency: 20, perTenant: runningPerTenant(config) });
    const h = gatedHandler();
    queue.start(h.handler);
    for (let i = 0; i < 60; i++) queue.enqueue(`a${i}`, 'a');
    queue.enqueue('b0', 'b');
    await settle();
    expect(h.started).toContain('b0');
    expect(h.started.filter((id) => id.startsWith('a'))).toHaveLength(10);
  });

  it('is the whole global cap for a single tenant, and an explicit value never exceeds it', () => {
    expect(runningPerTenant(loadConfig({ MAX_RUNNING_WORKFLOWS: '20' }))).toBe(20);
    expect(
      runningPerTenant(loadConfig({ MAX_RUNNING_WORKFLOWS: '20', API_KEYS: 'a:key-of-tenant-a-0123456789' })),
    ).toBe(20);
    const explicit = { MAX_RUNNING_WORKFLOWS: '20', API_KEYS: keys };
    expect(runningPerTenant(loadConfig({ ...explicit, MAX_RUNNING_WORKFLOWS_PER_TENANT: '15' }))).toBe(15);
    expect(runningPerTenant(loadConfig({ ...explicit, MAX_RUNNING_WORKFLOWS_PER_TENANT: '200' }))).toBe(20);
  });
});

describe('a freed place', () => {
  it('goes to a waiting tenant below its share before one above it, whatever the turn order', async () => {
    const queue = createInProcessWorkQueue({ concurrency: 4, perTenant: 4 });
    const h = gatedHandler();
    queue.start(h.handler);
    for (const id of ['a1', 'a2', 'a3']) queue.enqueue(id, 'a');
    queue.enqueue('b1', 'b');
    await settle();
    // Both wait now; A's turn comes next in round-robin order, but A holds 3 of 4 places (share 2).
    queue.enqueue('a4', 'a');
    queue.enqueue('b2', 'b');
    h.finish('b1');
    await settle();
    expect(h.started.at(-1)).toBe('b2');
    expect(queue.placesHeld('a')).toBe(3);
  });
});
