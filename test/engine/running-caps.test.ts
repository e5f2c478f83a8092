import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LlmRequest, LlmResponse } from '../../src/domain/llm.js';
import type { Clock } from '../../src/domain/ports.js';
import type { WorkflowRecord } from '../../src/domain/records.js';
import { createEngineHarness, type EngineHarness } from '../support/engine-harness.js';
import { advanceUntil } from '../support/manual-clock.js';
import { reportFigures } from '../support/scale.js';

/**
 * Children count against the running caps: with MAX_RUNNING_WORKFLOWS_PER_TENANT=2
 * and MAX_RUNNING_WORKFLOWS=4, a workload of roots with declared children (three deep), spawned
 * children (two deep) and parents waiting on four children at once never has more than 2 of a
 * tenant's workflows, nor more than 4 in all, at work — and everything completes: a parent that only
 * waits on its children gives its place back (docs/workflows.md#running-caps). Counted in event order, by
 * the model (calls in flight per tenant, each tenant on its own model) and by the work queue's own
 * count of places held; every call is made while its tenant holds at least as many places.
 */

const TENANT_CAP = 2;
const GLOBAL_CAP = 4;
const TENANTS = ['caps-a', 'caps-b'] as const;
const LATENCY_MS = 1_000;
const ROOTS_PER_KIND = 3;

/** A provider that answers by the conversation: "SPAWN <n> <then>" spawns n children (one a turn) whose task is <then>. */
function treeModel(clock: Clock) {
  const inFlight = new Map<string, number>();
  const model = {
    calls: 0,
    peakByTenant: new Map<string, number>(),
    peakTotal: 0,
    /** Per call, what the executor said it held for the calling tenant and in all (set by the test). */
    onCall: (_tenant: string, _inFlightOfTenant: number, _inFlightTotal: number): void => {},
    async complete(request: LlmRequest, { signal }: { signal: AbortSignal }): Promise<LlmResponse> {
      const tenant = request.model;
      inFlight.set(tenant, (inFlight.get(tenant) ?? 0) + 1);
      const total = [...inFlight.values()].reduce((a, b) => a + b, 0);
      model.peakByTenant.set(tenant, Math.max(model.peakByTenant.get(tenant) ?? 0, inFlight.get(tenant) ?? 0));
      model.peakTotal = Math.max(model.peakTotal, total);
      model.calls++;
      model.onCall(tenant, inFlight.get(tenant) ?? 0, total);
      try {
        const task = request.messages[0]?.content;
        const slow = typeof task === 'string' && task.startsWith('slow');
        await clock.sleep(slow ? 5 * LATENCY_MS : LATENCY_MS, signal);
      } finally {
        inFlight.set(tenant, (inFlight.get(tenant) ?? 1) - 1);
      }
      return answer(request);
    },
  };
  return model;
}

function answer(request: LlmRequest): LlmResponse {
  const first = request.messages[0];
  const task = typeof first?.content === 'string' ? first.content : '';
  const spawned = request.messages.filter(
    (m) => Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_result'),
  );
  const asked = /SPAWN (\d+) (\w+)/.exec(task);
  const base = { usage: { inputTokens: 10, outputTokens: 5 }, model: request.model, requestId: null };
  if (asked && spawned.length < Number(asked[1])) {
    return {
      ...base,
      content: [
        {
          type: 'tool_use',
          id: `toolu_${spawned.length}`,
          name: 'request_spawn_workflow',
          input: {
            name: `child-${spawned.length}`,
            description: asked[2] === 'deeper' ? 'SPAWN 1 leaf' : asked[2] === 'slow' ? 'slow leaf' : 'leaf work',
          },
        },
      ],
      stopReason: 'tool_use',
    };
  }
  return { ...base, content: [{ type: 'text', text: `done: ${task.slice(0, 40)}` }], stopReason: 'end_turn' };
}

const prompt = (name: string, user = `${name} work`) => ({ type: 'prompt', name, agent: 'w', user });
const child = (name: string, root: unknown) => ({ type: 'workflow', name, definition: { name, root } });

/** Declared children three deep (root → c1 → c2 → c3), deeper than the caps. */
const declaredDeep = {
  type: 'sequence',
  name: 'top',
  steps: [
    prompt('p0'),
    child('c1', {
      type: 'sequence',
      name: 's1',
      steps: [
        prompt('p1'),
        child('c2', { type: 'sequence', name: 's2', steps: [prompt('p2'), child('c3', prompt('p3'))] }),
      ],
    }),
    prompt('after'),
  ],
};
/** Spawned children: the root spawns 3, each of which spawns 1. */
const spawner = prompt('spawner', 'SPAWN 3 deeper');
/** A parent waiting on four children at once, next to a branch of its own that works. */
const fanOut = {
  type: 'parallel',
  name: 'fan',
  steps: [child('f1', prompt('q1')), child('f2', prompt('q2')), child('f3', prompt('q3')), prompt('own')],
};

function definition(tenant: string, kind: string, root: unknown, i: number) {
  return {
    name: `${kind}-${i}`,
    agents: { w: { model: `caps/${tenant}`, tools: ['request_spawn_workflow'] } },
    options: { cache: false, timeoutMs: 3_600_000 },
    root,
  };
}

async function submitWorkload(h: EngineHarness): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < ROOTS_PER_KIND; i++) {
    for (const tenant of TENANTS) {
      for (const [kind, root] of Object.entries({ declaredDeep, spawner, fanOut })) {
        ids.push(await h.submit(definition(tenant, kind, root, i), tenant));
      }
    }
  }
  return ids;
}

const CAPS_ENV = {
  MAX_RUNNING_WORKFLOWS: String(GLOBAL_CAP),
  MAX_RUNNING_WORKFLOWS_PER_TENANT: String(TENANT_CAP),
};

let harnesses: EngineHarness[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const h of harnesses) await h.close();
  harnesses = [];
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** What the executor's queue said, sampled at every model call and every published event. */
interface PlaceSamples {
  peakByTenant: Map<string, number>;
  peakTotal: number;
  /** Calls made while the caller's tenant held fewer places than it had calls in flight. */
  callsWithoutPlace: number;
  samples: number;
}

async function harnessWith(env: Record<string, string> = {}, startAt?: number) {
  let model: ReturnType<typeof treeModel> | undefined;
  const h = await createEngineHarness({
    ...(startAt === undefined ? {} : { startAt }),
    env: { ...CAPS_ENV, ...env },
    providers: { caps: { complete: (request, options) => model!.complete(request, options) } },
  });
  model = treeModel(h.clock);
  harnesses.push(h);
  const places: PlaceSamples = { peakByTenant: new Map(), peakTotal: 0, callsWithoutPlace: 0, samples: 0 };
  const sample = () => {
    places.samples++;
    places.peakTotal = Math.max(places.peakTotal, h.deps.queue.placesHeld());
    for (const tenant of TENANTS) {
      const held = h.deps.queue.placesHeld(tenant);
      places.peakByTenant.set(tenant, Math.max(places.peakByTenant.get(tenant) ?? 0, held));
    }
  };
  model.onCall = (tenant, inFlightOfTenant) => {
    sample();
    if (h.deps.queue.placesHeld(tenant) < inFlightOfTenant) places.callsWithoutPlace++;
  };
  h.deps.events.subscribeAll(sample);
  return { h, model, places };
}

function expectWithinCaps(model: ReturnType<typeof treeModel>, places: PlaceSamples): void {
  for (const tenant of TENANTS) {
    expect(model.peakByTenant.get(tenant) ?? 0, `${tenant}: calls in flight`).toBeLessThanOrEqual(TENANT_CAP);
    expect(places.peakByTenant.get(tenant) ?? 0, `${tenant}: places held`).toBeLessThanOrEqual(TENANT_CAP);
  }
  expect(model.peakTotal, 'calls in flight in all').toBeLessThanOrEqual(GLOBAL_CAP);
  expect(places.peakTotal, 'places held in all').toBeLessThanOrEqual(GLOBAL_CAP);
  expect(places.callsWithoutPlace, 'calls made without a place').toBe(0);
}

async function descendants(h: EngineHarness, ids: readonly string[]) {
  const all: WorkflowRecord[] = [];
  const visit = async (id: string, tenant: string): Promise<void> => {
    for (const item of (await h.deps.store.list(tenant, { parentWorkflowId: id }, null, 100)).items) {
      all.push(item);
      await visit(item.id, tenant);
    }
  };
  for (const id of ids) {
    const root = await h.deps.store.getById(id);
    await visit(id, root!.tenantId);
  }
  return all;
}

describe('running caps hold for child workflows', () => {
  it(`never more than ${TENANT_CAP} of a tenant's workflows nor ${GLOBAL_CAP} in all at work; declared, spawned, deep and fanned-out trees all complete`, async () => {
    const { h, model, places } = await harnessWith();
    const ids = await submitWorkload(h);
    await advanceUntil(h.clock, () => ids.every((id) => h.hasEnded(id)), {
      unmet: () => `not ended: ${ids.filter((id) => !h.hasEnded(id)).length} of ${ids.length} roots`,
    });
    for (const id of ids) expect((await h.deps.store.getById(id))?.status).toBe('completed');
    const children = await descendants(h, ids);
    expect(children.every((c) => c.status === 'completed')).toBe(true);
    // 3 declared (depth 3) + 6 spawned + 3 fanned out, per root triple.
    expect(children).toHaveLength(TENANTS.length * ROOTS_PER_KIND * 12);
    expect(Math.max(...children.map((c) => c.depth))).toBe(3);

    expectWithinCaps(model, places);
    // The caps were reached: the bound was exercised, not just unreached.
    expect(model.peakTotal).toBe(GLOBAL_CAP);
    expect(places.peakTotal).toBe(GLOBAL_CAP);
    reportFigures('runningCaps.workload', {
      tenantCap: TENANT_CAP,
      globalCap: GLOBAL_CAP,
      roots: ids.length,
      children: children.length,
      modelCalls: model.calls,
      peakCallsByTenant: Object.fromEntries(model.peakByTenant),
      peakCallsTotal: model.peakTotal,
      peakPlacesByTenant: Object.fromEntries(places.peakByTenant),
      peakPlacesTotal: places.peakTotal,
      placeSamples: places.samples,
    });
  });

  it('with both caps at 1, a three-deep declared tree, spawned children and a fan-out still complete (no deadlock)', async () => {
    const { h, model, places } = await harnessWith({
      MAX_RUNNING_WORKFLOWS: '1',
      MAX_RUNNING_WORKFLOWS_PER_TENANT: '1',
    });
    const ids = [
      await h.submit(definition('caps-a', 'declaredDeep', declaredDeep, 0), 'caps-a'),
      await h.submit(definition('caps-a', 'spawner', spawner, 0), 'caps-a'),
      await h.submit(definition('caps-b', 'fanOut', fanOut, 0), 'caps-b'),
    ];
    await advanceUntil(h.clock, () => ids.every((id) => h.hasEnded(id)), {
      unmet: () => `not ended: ${ids.filter((id) => !h.hasEnded(id)).length} of ${ids.length} roots`,
    });
    for (const id of ids) expect((await h.deps.store.getById(id))?.status).toBe('completed');
    expect(Math.max(...model.peakByTenant.values())).toBe(1);
    expect(model.peakTotal).toBe(1);
    expect(places.peakTotal).toBe(1);
    expect(places.callsWithoutPlace).toBe(0);
  });

  it('a restart in the middle resumes every tree within the caps and completes it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-caps-'));
    dirs.push(dir);
    const env = { DATABASE_PATH: join(dir, 'caps.db') };
    const first = await harnessWith(env);
    const ids = await submitWorkload(first.h);
    // Run until a third of the work is answered: parents wait on children, children wait for places.
    await advanceUntil(first.h.clock, () => first.model.calls >= 40);
    expect(ids.filter((id) => !first.h.hasEnded(id)).length).toBeGreaterThan(0);
    expectWithinCaps(first.model, first.places);
    const childrenOpenAtRestart = (await descendants(first.h, ids)).filter((c) => c.endedAt === null).length;
    const stoppedAt = first.h.clock.now();
    await first.h.close();
    harnesses = harnesses.filter((h) => h !== first.h);

    const second = await harnessWith(env, stoppedAt);
    const stillOpen = await Promise.all(ids.map((id) => second.h.deps.store.getById(id)));
    const resumed = stillOpen.flatMap((w) => (w && w.status !== 'completed' ? [w.id] : []));
    const resumedRoots = resumed.length;
    expect(resumedRoots).toBeGreaterThan(0);
    await advanceUntil(second.h.clock, () => resumed.every((id) => second.h.hasEnded(id)), {
      unmet: () => `not ended after the restart: ${resumed.filter((id) => !second.h.hasEnded(id)).length} roots`,
    });
    for (const id of ids) expect((await second.h.deps.store.getById(id))?.status).toBe('completed');
    const children = await descendants(second.h, ids);
    expect(children.filter((c) => c.status !== 'completed').map((c) => [c.name, c.status, c.error])).toEqual([]);
    expect(children).toHaveLength(TENANTS.length * ROOTS_PER_KIND * 12);
    expectWithinCaps(second.model, second.places);
    expect(second.places.peakTotal).toBe(GLOBAL_CAP);
    reportFigures('runningCaps.restart', {
      callsBeforeRestart: first.model.calls,
      rootsResumed: resumedRoots,
      callsAfterRestart: second.model.calls,
      peakCallsByTenantAfter: Object.fromEntries(second.model.peakByTenant),
      peakPlacesTotalAfter: second.places.peakTotal,
      childrenOpenAtRestart,
    });
  });

  it('a run shut down while it waits for its spawned children is not completed; it resumes and ends after them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-caps-'));
    dirs.push(dir);
    const env = { DATABASE_PATH: join(dir, 'settle.db') };
    const first = await harnessWith(env);
    const id = await first.h.submit(definition('caps-a', 'spawner', prompt('spawner', 'SPAWN 1 slow'), 0), 'caps-a');
    // Spawn at +1 s, the root's node answers at +2 s; the child's slow call runs until +6 s.
    await advanceUntil(first.h.clock, () => first.h.published(id).some((e) => e.type === 'stepEnd'));
    const [spawned] = await descendants(first.h, [id]);
    expect(spawned?.status).toBe('running');
    await first.h.close();
    harnesses = harnesses.filter((h) => h !== first.h);
    const second = await harnessWith(env, first.h.clock.now());
    expect((await second.h.deps.store.getById(id))?.status).toBe('running');
    await advanceUntil(second.h.clock, () => second.h.hasEnded(id));
    const [child] = await descendants(second.h, [id]);
    expect(child?.status).toBe('completed');
    const root = await second.h.deps.store.getById(id);
    expect(root?.status).toBe('completed');
    expect(root?.endedAt).toBeGreaterThanOrEqual(child?.endedAt ?? Number.POSITIVE_INFINITY);
  });
});
