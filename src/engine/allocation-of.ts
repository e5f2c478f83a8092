import { type Complexity, promptNodesOf, type WorkflowDefinition } from '../domain/definition.js';
import { explainComplexity } from '../metrics/complexity.js';
import { type Allocation, COMPLEXITY_ALLOCATIONS } from '../routing/allocation.js';

/**
 * The allocation a workflow runs under (DESIGN §8) — only when its task is described (a declared
 * complexity or signals). A bare tree still has a complexity (for `model: "auto"` and the metrics)
 * but keeps the parallelism and the concurrency it was written with: the client did not ask to be
 * routed.
 */
export function describedAllocation(
  definition: Pick<WorkflowDefinition, 'task' | 'root'>,
): { complexity: Complexity; allocation: Allocation } | null {
  const { complexity, source } = explainComplexity(definition.task, promptNodesOf(definition.root).size);
  return source === 'tree' ? null : { complexity, allocation: COMPLEXITY_ALLOCATIONS[complexity] };
}
