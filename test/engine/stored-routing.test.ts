import { describe, expect, it } from 'vitest';
import type { Routing } from '../../src/domain/allocation.js';
import { WorkflowDefinitionSchema } from '../../src/domain/definition.js';
import { planWorkflow } from '../../src/engine/submission/plan.js';
import { COMPLEXITY_ALLOCATIONS } from '../../src/routing/allocation.js';
import { DEFAULT_TENANT, useEngineHarness } from '../support/engine-harness.js';

/**
 * A workflow's routing (complexity and allocation) is settled once, when it is planned, and stored
 * with it: the run reads it from the row, never classifies the definition again — except a row
 * stored before migration 0027, which has none.
 */
const h = useEngineHarness({
  env: { MODEL_TIERS: JSON.stringify({ haiku: 'script/haiku', sonnet: 'script/sonnet', opus: 'script/opus' }) },
});

/** A trivial task (its development tier: haiku) whose one prompt runs on `model: "auto"`. */
const trivial = {
  name: 'routed',
  task: { type: 'fix', complexity: 'trivial' },
  agents: { dev: { model: 'auto', role: 'development' } },
  root: { type: 'prompt', name: 'work', agent: 'dev', user: 'Fix it' },
  options: { cache: false },
};
const complexRouting: Routing = { complexity: 'complex', allocation: COMPLEXITY_ALLOCATIONS.complex };

/** Stores the definition under the given routing, as a row another process planned, and runs it. */
async function runStored(routing: Routing | null): Promise<string | undefined> {
  const planned = planWorkflow(WorkflowDefinitionSchema.parse(trivial), {
    tenantId: DEFAULT_TENANT,
    now: h.clock.now(),
  });
  planned.workflow.routing = routing;
  await h.deps.store.create(planned);
  h.model.enqueue({ text: 'fixed' });
  h.deps.queue.enqueue(planned.workflow.id, DEFAULT_TENANT);
  const ended = await h.runUntilEnd(planned.workflow.id);
  expect(ended.workflow.status).toBe('completed');
  return h.model.calls.at(-1)?.request.model;
}

describe('stored routing', () => {
  it('is settled at submission and stored with the workflow', async () => {
    h.model.enqueue({ text: 'fixed' });
    const id = await h.submit({ ...trivial, task: { type: 'fix', complexity: 'complex' } });
    await h.runUntilEnd(id);
    expect((await h.deps.store.getById(id))?.routing).toEqual(complexRouting);
    // complex: development runs on sonnet.
    expect(h.model.calls[0]?.request.model).toBe('sonnet');
  });

  it('is what a run follows, not a fresh classification of the definition', async () => {
    // The definition alone says trivial (haiku); the stored routing says complex (sonnet).
    expect(await runStored(complexRouting)).toBe('sonnet');
  });

  it('is settled from the definition for a row stored before it was kept', async () => {
    expect(await runStored(null)).toBe('haiku');
  });
});
