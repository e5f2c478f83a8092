import { afterEach, describe, expect, it } from 'vitest';
import type { WorkflowEvent } from '../../src/domain/events.js';
import type { LlmRequest, LlmResponse } from '../../src/domain/llm.js';
import type { Clock, LlmProvider } from '../../src/domain/ports.js';
import type { WorkflowRecord } from '../../src/domain/records.js';
import { createEngineHarness, type EngineHarness } from '../support/engine-harness.js';
import { advanceUntil } from '../support/manual-clock.js';

/**
 * docs/design.md#agent-tools acceptance, the spawn bomb: an agent that calls request_spawn_workflow on every turn,
 * in every child it spawns. The tree's limits (maxDepth 3, maxChildren 10, maxDescendants 50) and
 * the rate (10 spawns a minute per tree) hold, counted from the store and the events; every
 * refusal reaches the model as a tool error; nothing fails inside baton; cancelling the root
 * cancels every descendant at once (on the injected clock: no time passes).
 */

const LATENCY_MS = 15_000;

/** Answers every request with a spawn request; records the tool results it is sent back. */
function bomber(clock: Clock): LlmProvider & { refusals: string[]; successes: number; calls: number } {
  let n = 0;
  const model = {
    refusals: [] as string[],
    successes: 0,
    calls: 0,
    async complete(request: LlmRequest, { signal }: { signal: AbortSignal }): Promise<LlmResponse> {
      model.calls++;
      const last = request.messages.at(-1);
      if (Array.isArray(last?.content)) {
        for (const block of last.content) {
          if (block.type !== 'tool_result') continue;
          if (block.is_error) model.refusals.push(String(block.content));
          else model.successes++;
        }
      }
      await clock.sleep(LATENCY_MS, signal);
      n++;
      return {
        content: [
          {
            type: 'tool_use',
            id: `toolu_${n}`,
            name: 'request_spawn_workflow',
            input: { name: `bomb-${n}`, description: 'Spawn more of yourself.' },
          },
        ],
        stopReason: 'tool_use',
        usage: { inputTokens: 10, outputTokens: 5 },
        model: request.model,
        requestId: `bomb_${n}`,
      };
    },
  };
  return model;
}

let h: EngineHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function tree(harness: EngineHarness, rootId: string): Promise<WorkflowRecord[]> {
  const all: WorkflowRecord[] = [];
  const visit = async (id: string) => {
    for (const child of await harness.deps.store
      .list((await harness.deps.store.getById(id))!.tenantId, { parentWorkflowId: id }, null, 100)
      .then((p) => p.items)) {
      all.push(child);
      await visit(child.id);
    }
  };
  await visit(rootId);
  return all;
}

describe('spawn bomb', () => {
  it('holds depth, children, descendants and rate limits; refusals are tool errors; cancel reaches every descendant', async () => {
    let model: ReturnType<typeof bomber> | undefined;
    h = await createEngineHarness({
      // maxLlmCalls is the whole tree's budget: 51 workflows calling every 15 s for ten
      // minutes send ~1 500 requests, which the default (200) would stop first. This test is
      // about the spawn limits, so the tree gets the largest budget there is.
      env: { MAX_LLM_CALLS_PER_WORKFLOW: '10000' },
      providers: {
        bomb: {
          complete: (request, options) => model!.complete(request, options),
        },
      },
    });
    model = bomber(h.clock);
    const rootId = await h.submit({
      name: 'bomb',
      agents: { b: { model: 'bomb/x', tools: ['request_spawn_workflow'] } },
      options: { timeoutMs: 3_600_000, limits: { maxLlmCalls: 10_000 } },
      root: { type: 'prompt', name: 'spawn', agent: 'b', user: 'go', maxTurns: 50, timeoutMs: 3_600_000 },
    });

    // Let the bomb run ten simulated minutes.
    const t0 = h.clock.now();
    await advanceUntil(h.clock, () => h!.clock.now() - t0 >= 10 * 60_000, {
      unmet: () =>
        JSON.stringify(
          h!
            .published(rootId)
            .map((e) => [e.type, e.payload])
            .slice(-6),
        ) + JSON.stringify(h!.takeEngineErrors()),
    });
    const spawned = await tree(h, rootId);
    const root = (await h.deps.store.getById(rootId))!;

    // Counted from the store.
    // Ten minutes at 10 a minute would be 100: the descendants limit stops the tree at exactly 50.
    expect(spawned).toHaveLength(50);
    const byParent = new Map<string, number>();
    for (const w of spawned) byParent.set(w.parentWorkflowId!, (byParent.get(w.parentWorkflowId!) ?? 0) + 1);
    expect(Math.max(...byParent.values())).toBe(10);
    expect(Math.max(...spawned.map((w) => w.depth))).toBe(3);
    expect(spawned.every((w) => w.rootWorkflowId === root.id && w.tenantId === root.tenantId)).toBe(true);

    // The rate, from the spawnRequested events of the whole tree: no 60 s window holds more than 10.
    const spawnTimes: number[] = [];
    for (const w of [root, ...spawned]) {
      for (const e of await h.events(w.id)) if (e.type === 'spawnRequested') spawnTimes.push(e.at);
    }
    spawnTimes.sort((a, b) => a - b);
    expect(spawnTimes).toHaveLength(spawned.length);
    for (let i = 0; i + 10 < spawnTimes.length; i++) {
      expect(spawnTimes[i + 10]! - spawnTimes[i]!).toBeGreaterThanOrEqual(60_000);
    }

    // Refusals reached the model as tool errors, naming the limit.
    expect(model.successes).toBe(spawned.length);
    expect(model.refusals.length).toBeGreaterThan(0);
    const reasons = model.refusals.map((r) => /"error":"([^"]+)"/.exec(r)?.[1] ?? r);
    for (const limit of ['rate limit', 'maxChildren 10', 'maxDescendants 50', 'maxDepth']) {
      expect(
        reasons.some((r) => r.includes(limit)),
        limit,
      ).toBe(true);
    }
    expect(reasons.every((r) => /rate limit|maxChildren|maxDescendants|maxDepth/.test(r))).toBe(true);

    // Cancel the root: every descendant ends cancelled, with no time passing on the clock.
    const cancelledAt = h.clock.now();
    await h.cancel(rootId);
    await h.untilEnd(rootId);
    const after = await tree(h, rootId);
    expect(after.every((w) => w.status === 'cancelled' || w.status === 'failed')).toBe(true);
    expect(after.filter((w) => w.status === 'cancelled').length).toBeGreaterThan(0);
    const ends: WorkflowEvent[] = [];
    for (const w of after) ends.push(...(await h.events(w.id)).filter((e) => e.type === 'workflowEnd'));
    expect(ends).toHaveLength(after.length);
    expect(Math.max(...ends.map((e) => e.at)) - cancelledAt).toBeLessThanOrEqual(5_000);
    expect((await h.deps.store.getById(rootId))?.status).toBe('cancelled');
    // No 5xx-class failure inside baton: nothing became INTERNAL.
    expect(h.takeEngineErrors()).toEqual([]);
  });
});
