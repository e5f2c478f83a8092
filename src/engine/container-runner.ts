import type { ParallelNode, SequenceNode } from '../domain/definition.js';
import type { Run } from './run.js';
import { isShutdown } from './services.js';

/** `sequence`: children in order; its output is the last child's. `spanId` parents the children's spans. */
export async function runSequence(run: Run, node: SequenceNode, signal: AbortSignal, spanId: string): Promise<unknown> {
  let output: unknown = null;
  for (const step of node.steps) output = await run.runNode(step, signal, spanId);
  return output;
}

/**
 * `parallel`: children really run concurrently; all settle before the node decides, so no branch is
 * left running unrecorded when another fails. Output: an object keyed by child name.
 */
export async function runParallel(run: Run, node: ParallelNode, signal: AbortSignal, spanId: string): Promise<unknown> {
  const results = await Promise.allSettled(node.steps.map((step) => run.runNode(step, signal, spanId)));
  const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  const shutdown = failures.find((f) => isShutdown(f.reason));
  if (shutdown) throw shutdown.reason;
  if (failures[0]) throw failures[0].reason;
  const output: Record<string, unknown> = {};
  for (const [i, step] of node.steps.entries())
    output[step.name] = (results[i] as PromiseFulfilledResult<unknown>).value;
  return output;
}
