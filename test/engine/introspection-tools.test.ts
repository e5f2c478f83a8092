import { describe, expect, it } from 'vitest';
import type { WorkflowEvent } from '../../src/domain/events.js';
import type { LlmRequest } from '../../src/domain/llm.js';
import { useEngineHarness } from '../support/engine-harness.js';

/**
 * docs/design.md#agent-tools acceptance: a scripted agent asks each introspection tool about its own position in a
 * three-level tree (main → group → probe) and gets correct answers, field by field;
 * inspect_prior_outputs returns the real persisted output of an earlier step, and
 * inspect_cache_status finds the cache key that inspect_prior_outputs revealed.
 */

const h = useEngineHarness();

const TOOLS = [
  'inspect_current_node',
  'read_ancestor_chain',
  'list_siblings_children',
  'inspect_prior_outputs',
  'inspect_cache_status',
];

/** The JSON inside the data delimiter of the last tool result the request carries. */
function lastToolOutput(request: LlmRequest): Record<string, unknown> {
  const last = request.messages.at(-1);
  const block = Array.isArray(last?.content) ? last.content.find((b) => b.type === 'tool_result') : undefined;
  const content = block && 'content' in block ? String(block.content) : '';
  const match = /^<tool_output tool="[a-z_]+" kind="data: not instructions">\n([\s\S]*)\n<\/tool_output>$/.exec(
    content,
  );
  if (!match?.[1]) throw new Error(`no tool output in ${content}`);
  return JSON.parse(match[1]) as Record<string, unknown>;
}

function toolOutputs(events: readonly WorkflowEvent[]): Array<{ tool: string; output: unknown; isError: boolean }> {
  return events.flatMap((e) =>
    e.type === 'toolInvocation'
      ? [{ tool: e.payload.toolName, output: e.payload.output, isError: e.payload.isError }]
      : [],
  );
}

describe('introspection tools', () => {
  it('answer a scripted agent correctly about its position, prior outputs and the cache', async () => {
    h.model.enqueue(
      { text: 'the first answer', label: 'first' },
      { toolUse: { name: 'inspect_current_node' } },
      { toolUse: { name: 'read_ancestor_chain' } },
      { toolUse: { name: 'read_ancestor_chain', input: { maxDepth: 1 } } },
      { toolUse: { name: 'list_siblings_children', input: { type: 'siblings' } } },
      { toolUse: { name: 'list_siblings_children', input: { type: 'children' } } },
      { toolUse: { name: 'inspect_prior_outputs', input: { count: 5 } } },
      {
        toolUse: {
          name: 'inspect_cache_status',
          // The key the previous tool revealed.
          input: (request) => {
            const outputs = lastToolOutput(request).outputs as Array<{ cacheKeys: string[] }>;
            return { promptHash: outputs[0]?.cacheKeys[0] ?? 'none' };
          },
        },
      },
      { toolUse: { name: 'inspect_cache_status', input: { promptHash: 'probe:not-a-key' } } },
      { toolUse: { name: 'inspect_prior_outputs', input: { nodeId: 'nd_unknown' } } },
      { text: 'I know where I am.', label: 'probe final' },
      { text: 'after', label: 'after' },
    );
    const id = await h.submit({
      name: 'introspect',
      agents: { a: { model: 'script/sonnet', tools: TOOLS } },
      root: {
        type: 'sequence',
        name: 'main',
        steps: [
          { type: 'prompt', name: 'first', agent: 'a', user: 'start' },
          {
            type: 'sequence',
            name: 'group',
            steps: [
              { type: 'prompt', name: 'probe', agent: 'a', user: 'where am I?' },
              { type: 'prompt', name: 'after', agent: 'a', user: 'then' },
            ],
          },
        ],
      },
    });
    const { workflow, events } = await h.untilEnd(id);
    expect(workflow.status).toBe('completed');
    const nodes = await h.deps.store.nodes(id);
    const byName = new Map(nodes.map((n) => [n.name, n]));
    const [main, first, group, probe, after] = ['main', 'first', 'group', 'probe', 'after'].map((n) => byName.get(n)!);
    expect(first?.cacheKeys).toHaveLength(1);

    const outputs = toolOutputs(events);
    expect(outputs.map((o) => [o.tool, o.isError])).toEqual([
      ['inspect_current_node', false],
      ['read_ancestor_chain', false],
      ['read_ancestor_chain', false],
      ['list_siblings_children', false],
      ['list_siblings_children', false],
      ['inspect_prior_outputs', false],
      ['inspect_cache_status', false],
      ['inspect_cache_status', false],
      ['inspect_prior_outputs', true],
    ]);
    const [current, chain, shortChain, siblings, children, prior, cached, uncached, unknown] = outputs.map(
      (o) => o.output,
    );
    expect(current).toEqual({
      id: probe!.id,
      name: 'probe',
      status: 'running',
      parentId: group!.id,
      parentName: 'group',
      childCount: 0,
      depth: 2,
    });
    expect(chain).toEqual({
      ancestors: [
        { id: group!.id, name: 'group', status: 'running', depth: 1 },
        { id: main!.id, name: 'main', status: 'running', depth: 0 },
      ],
      totalDepth: 2,
    });
    expect(shortChain).toEqual({
      ancestors: [{ id: group!.id, name: 'group', status: 'running', depth: 1 }],
      totalDepth: 2,
    });
    expect(siblings).toEqual({ type: 'siblings', nodes: [{ id: after!.id, name: 'after', status: 'idle' }] });
    expect(children).toEqual({ type: 'children', nodes: [] });
    // The persisted output of the earlier step, exactly.
    expect(prior).toEqual({
      outputs: [
        {
          nodeId: first!.id,
          name: 'first',
          type: 'prompt',
          output: 'the first answer',
          cacheKeys: first!.cacheKeys,
          endedAt: first!.endedAt,
        },
      ],
    });
    expect(cached).toMatchObject({ exists: true, key: first!.cacheKeys[0], hits: 0 });
    expect(typeof (cached as { createdAt: unknown }).createdAt).toBe('string');
    expect(uncached).toEqual({ exists: false, key: 'probe:not-a-key' });
    expect(unknown).toEqual({ error: 'no node "nd_unknown" in this workflow' });
  });
});
