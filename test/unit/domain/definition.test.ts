import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type ChildDefinition,
  type ChildWorkflowNode,
  NodeSchema,
  type ParallelNode,
  type PromptNode,
  type ReviewNode,
  type SequenceNode,
  type WorkflowNode,
} from '../../../src/domain/definition.js';

describe('recursive node schemas', () => {
  // Checked by `tsc` (npm run typecheck): inferred through the getters, not widened to any.
  it('infer the node union and its recursion', () => {
    expectTypeOf<WorkflowNode>().not.toBeAny();
    expectTypeOf<WorkflowNode>().toEqualTypeOf<
      PromptNode | SequenceNode | ParallelNode | ReviewNode | ChildWorkflowNode
    >();
    expectTypeOf<SequenceNode['steps']>().toEqualTypeOf<WorkflowNode[]>();
    expectTypeOf<ParallelNode['steps']>().toEqualTypeOf<WorkflowNode[]>();
    expectTypeOf<ChildDefinition['root']>().toEqualTypeOf<WorkflowNode>();
  });

  it('parse nested containers and refuse an unknown field deep inside', () => {
    const prompt = { type: 'prompt', name: 'p', agent: 'a', user: 'hi' };
    const child = { type: 'workflow', name: 'c', definition: { name: 'child', root: prompt } };
    const tree = { type: 'sequence', name: 's', steps: [{ type: 'parallel', name: 'par', steps: [child, prompt] }] };
    expect(NodeSchema.parse(tree)).toEqual(tree);

    const bad = { ...tree, steps: [{ ...child, definition: { name: 'child', root: { ...prompt, extra: 1 } } }] };
    const result = NodeSchema.safeParse(bad);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(['steps', 0, 'definition', 'root']);
  });
});
