import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { DEFINITION_CACHE_ENTRIES } from '../../../src/store/sqlite/workflows.repo.js';
import { newWorkflow, openMemoryStore, type StoreFixture } from '../../support/store-fixtures.js';

/**
 * The store keeps parsed definitions in memory so reads of running and recent workflows skip
 * JSON.parse + zod. The load soak found it holding every definition it had seen: bounded only by
 * 32 MiB of JSON text, which is over 100 000 small definitions and well over 100 MiB of heap, so
 * resident memory grew for as long as workflows were submitted. It is bounded by entries now.
 */

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Creates one workflow and keeps only a weak reference to its definition object. */
async function createWatched(fx: StoreFixture): Promise<{ id: string; definition: WeakRef<object> }> {
  const created = newWorkflow();
  await fx.store.create(created);
  return { id: created.workflow.id, definition: new WeakRef(created.workflow.definition) };
}

async function collectGarbage(): Promise<void> {
  // WeakRef targets stay alive until the current job ends: let it end, then collect.
  await new Promise((resolve) => setTimeout(resolve, 0));
  gc();
}

describe('the parsed-definition cache', () => {
  it(`lets a definition go once ${DEFINITION_CACHE_ENTRIES} newer workflows were stored`, async () => {
    const fx = openMemoryStore();
    const watched = await createWatched(fx);
    for (let i = 0; i < DEFINITION_CACHE_ENTRIES; i++) await fx.store.create(newWorkflow());
    await collectGarbage();

    expect(watched.definition.deref()).toBeUndefined();
    // Still readable: parsed again from its stored text.
    expect((await fx.store.getById(watched.id))?.definition).toMatchObject({ name: 'review-pr' });
  });

  it('serves a recent definition from memory: the object stored, not a re-parse', async () => {
    const fx = openMemoryStore();
    const created = newWorkflow();
    await fx.store.create(created);
    for (let i = 0; i < DEFINITION_CACHE_ENTRIES - 1; i++) await fx.store.create(newWorkflow());

    expect((await fx.store.getById(created.workflow.id))?.definition).toBe(created.workflow.definition);
  });
});
