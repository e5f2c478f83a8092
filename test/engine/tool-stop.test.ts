import { describe, expect, it } from 'vitest';
import type { ChangeSet } from '../../src/domain/ports.js';
import { leaseLostError } from '../../src/engine/errors.js';
import { useEngineHarness } from '../support/engine-harness.js';

/**
 * A tool whose own commit is refused because the run lost its lease (another instance holds the
 * workflow now) stops the run like any other commit of it: the execution ends here without an end,
 * nothing is reported as a fault of ours, and the model is not handed a "tool failed" result to
 * carry on with. Found by the 3-instance kill test: a spawn's commit fenced off was logged as an
 * unexpected error and turned into a tool error for the model.
 */
const h = useEngineHarness();

describe('a tool whose commit is fenced off', () => {
  it('stops the run without a fault or a tool result', async () => {
    const store = h.deps.store;
    const commit = store.commit.bind(store);
    let refused = 0;
    store.commit = (changes: ChangeSet) => {
      if ((changes.events ?? []).some((e) => e.type === 'spawnRequested')) {
        refused++;
        return Promise.reject(leaseLostError());
      }
      return commit(changes);
    };
    h.model.enqueue({ toolUse: { name: 'request_spawn_workflow', input: { name: 'helper', description: 'Help.' } } });
    const id = await h.submit({
      name: 'fenced-spawn',
      agents: { a: { model: 'script/sonnet', tools: ['request_spawn_workflow'] } },
      root: { type: 'prompt', name: 'ask', agent: 'a', user: 'Get help.' },
    });
    await h.settle();
    await h.settle();
    expect(refused).toBe(1);
    expect(h.engineErrors).toEqual([]);
    // One call: the run stopped at the refusal instead of asking the model again.
    expect(h.model.calls).toHaveLength(1);
    expect(h.deps.executor.running).toBe(0);
    expect(h.hasEnded(id)).toBe(false);
    expect(h.published(id).some((e) => e.type === 'toolInvocation')).toBe(false);
  });
});
