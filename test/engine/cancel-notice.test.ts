import { afterEach, describe, expect, it } from 'vitest';
import type { RunningPlace, RunSignals, WorkQueue } from '../../src/domain/ports.js';
import type { ScaleOut } from '../../src/store/store-set.js';
import { createEngineHarness, type EngineHarness } from '../support/engine-harness.js';

/**
 * Scaled out, a cancel made through another instance reaches the instance that claimed the root
 * as a notice (RunSignals.cancelled), after the flag is durable. A notice arriving after the claim
 * but before the run is registered was dropped: the run then started from the submission's records
 * (no cancel in them) and completed a workflow its client had cancelled. Here the in-process queue
 * is wrapped as the leased one would be, and the notice is delivered at those two moments: while
 * the claimed root waits to be handed to the executor, and right after the executor took it.
 */
let h: EngineHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

type Moment = 'before the executor takes it' | 'as the executor starts it';

/**
 * The in-process queue delivering like a claim would, with the cancel of another instance: its
 * flag (`flag`, durable) before the delivery, then its notice `at` that moment.
 */
function noticeQueue(at: Moment, flag: (workflowId: string) => Promise<unknown>): ScaleOut {
  return {
    workQueue(local: WorkQueue): WorkQueue {
      return {
        enqueue: (id, tenantId) => local.enqueue(id, tenantId),
        start(handler, signals) {
          const told = signals as RunSignals;
          local.start(async (id: string, place: RunningPlace, untouched: boolean) => {
            await flag(id);
            if (at === 'before the executor takes it') told.cancelled([id]);
            const run = handler(id, place, untouched);
            // In the same turn: the executor has the root but has not registered its run yet.
            if (at === 'as the executor starts it') told.cancelled([id]);
            await run;
          });
        },
        runHere: (id, work) => local.runHere(id, work),
        resumeAt: (id, tenantId, when) => local.resumeAt(id, tenantId, when),
        announceCancel: () => {},
        place: (tenantId, signal) => local.place(tenantId, signal),
        placesHeld: (tenantId) => local.placesHeld(tenantId),
        stop: () => local.stop(),
        get depth() {
          return local.depth;
        },
      };
    },
    eventBus: (local) => local,
    leases: () => ({ held: 0, claims: 0, losses: 0, reaps: 0, fenceRejections: 0 }),
  };
}

const DEFINITION = {
  name: 'cancelled-elsewhere',
  agents: { a: { model: 'script/sonnet' } },
  root: { type: 'prompt', name: 'ask', agent: 'a', user: 'Hello.' },
};

describe('a cancel notice for a root claimed here', () => {
  it.each<Moment>(['before the executor takes it', 'as the executor starts it'])(
    '%s: the workflow ends cancelled without a model call',
    async (moment) => {
      const harness = await createEngineHarness({
        scaleOut: noticeQueue(moment, (id) => harness.deps.store.requestCancel(id)),
      });
      h = harness;
      const id = await harness.submit(DEFINITION);
      const { workflow } = await harness.untilEnd(id);
      expect(workflow.status).toBe('cancelled');
      expect(harness.model.calls).toHaveLength(0);
    },
  );
});
