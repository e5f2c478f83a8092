import { describe, expect, it } from 'vitest';
import type { LlmRequest } from '../../src/domain/llm.js';
import { useEngineHarness } from '../support/engine-harness.js';

/**
 * The tools a request offers are part of its cache key, through a real run (docs/design.md#caching):
 * two workflows whose prompt differs only in the agent's tool definitions each ask the provider,
 * while a third, identical to the first, is answered from the first one's cache entry.
 */
const h = useEngineHarness();

const toolNames = (request: LlmRequest) => (request.tools ?? []).map((tool) => tool.name);

function flow(tools: string[]) {
  return {
    name: 'cache-tools',
    agents: { a: { model: 'script/sonnet', tools } },
    root: { type: 'prompt', name: 'ask', agent: 'a', user: 'What do you see?' },
  };
}

async function run(tools: string[]) {
  const id = await h.submit(flow(tools));
  const { workflow, events } = await h.runUntilEnd(id);
  expect(workflow.status).toBe('completed');
  return { output: workflow.output, events };
}

describe('the cache key covers the tools a request offers', () => {
  it('a prompt offered other tools asks the provider again; the same tools are served from the cache', async () => {
    h.model.enqueue(
      { text: 'with the node tool', when: (r) => toolNames(r).join() === 'inspect_current_node', label: 'node' },
      { text: 'with the ancestor tool', when: (r) => toolNames(r).join() === 'read_ancestor_chain', label: 'chain' },
    );
    const first = await run(['inspect_current_node']);
    const other = await run(['read_ancestor_chain']);
    expect(h.model.calls).toHaveLength(2);
    expect(other.output).toBe('with the ancestor tool');
    const missKeys = [first, other].map((r) => r.events.find((e) => e.type === 'cacheMiss')?.payload.key);
    expect(missKeys[0]).toMatch(/^a:[0-9a-f]{64}$/);
    expect(missKeys[1]).toMatch(/^a:[0-9a-f]{64}$/);
    expect(missKeys[1]).not.toBe(missKeys[0]);

    // The control: the first workflow again is a hit on its own entry, without a call.
    const again = await run(['inspect_current_node']);
    expect(h.model.calls).toHaveLength(2);
    expect(again.output).toBe('with the node tool');
    expect(again.events.find((e) => e.type === 'cacheHit')?.payload.key).toBe(missKeys[0]);
  });
});
