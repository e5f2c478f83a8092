import type { ParallelNode, SequenceNode, WorkflowNode } from '../../domain/definition.js';
import { isShutdown } from '../errors.js';
import type { NodeAttempt, NodeContext, NodeHandler } from '../node-context.js';

/**
 * Containers' results need not be durable before the run moves on: after a crash a container
 * completes again from its children's stored outputs at no cost, so its commit rides along with the
 * next one. Each runs its steps inside a custom_span that parents the steps' spans.
 */
function container<N extends SequenceNode | ParallelNode>(
  runSteps: (ctx: NodeContext, node: N, signal: AbortSignal, spanId: string) => Promise<unknown>,
): NodeHandler<N> {
  return {
    durable: false,
    run(ctx, node, at: NodeAttempt) {
      const span = {
        type: 'custom_span' as const,
        parentId: at.parentSpan,
        nodeId: at.record.id,
        fields: { operation_name: node.type, metadata: { node: node.name, attempt: at.attempt } },
      };
      return ctx.journal.withSpan(span, (spanId) => runSteps(ctx, node, at.signal, spanId));
    },
  };
}

/** `sequence`: its steps in order; its output is the last step's. */
export const sequenceHandler = container<SequenceNode>(async (ctx, node, signal, spanId) => {
  let output: unknown = null;
  for (const step of node.steps) output = await ctx.runNode(step, signal, spanId);
  return output;
});

/**
 * `parallel`: its steps really run concurrently — one at a time when a routed workflow's allocation
 * says `parallel: false` (docs/design.md#complexity-allocation-selection-and-review); all settle before the node
 * decides, so no branch is left
 * running unrecorded when another fails. Output: an object keyed by step name.
 */
export const parallelHandler = container<ParallelNode>(async (ctx, node, signal, spanId) => {
  const steps: readonly WorkflowNode[] = node.steps;
  const run = (step: WorkflowNode) => ctx.runNode(step, signal, spanId);
  // Each branch is a strand of the run: its place goes back only when every strand waits on children.
  const results =
    ctx.view.allocation?.parallel === false
      ? await oneAtATime(steps, run)
      : await ctx.place.branches(steps.map((step) => () => run(step)));
  const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  const shutdown = failures.find((f) => isShutdown(f.reason));
  if (shutdown) throw shutdown.reason;
  if (failures[0]) throw failures[0].reason;
  const output: Record<string, unknown> = {};
  for (const [i, step] of steps.entries()) output[step.name] = (results[i] as PromiseFulfilledResult<unknown>).value;
  return output;
});

async function oneAtATime(
  steps: readonly WorkflowNode[],
  run: (step: WorkflowNode) => Promise<unknown>,
): Promise<PromiseSettledResult<unknown>[]> {
  const results: PromiseSettledResult<unknown>[] = [];
  for (const step of steps) {
    try {
      results.push({ status: 'fulfilled', value: await run(step) });
    } catch (reason) {
      results.push({ status: 'rejected', reason });
    }
  }
  return results;
}
