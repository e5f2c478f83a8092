import type { Routing } from '../../domain/allocation.js';
import { promptNodesOf, type WorkflowDefinition } from '../../domain/definition.js';
import { explainComplexity } from '../../metrics/complexity.js';
import { COMPLEXITY_ALLOCATIONS } from '../../routing/allocation.js';

/**
 * A workflow's complexity and the allocation it runs under
 * (docs/design.md#complexity-allocation-selection-and-review), settled once when it is planned and
 * stored with it. The allocation applies only when the task is described (a declared complexity or
 * signals): a bare tree still has a complexity (for `model: "auto"` and the metrics) but keeps the
 * parallelism and the concurrency it was written with — its client did not ask to be routed.
 */
export function routingOf(definition: Pick<WorkflowDefinition, 'task' | 'root'>): Routing {
  const { complexity, source } = explainComplexity(definition.task, promptNodesOf(definition.root).size);
  return { complexity, allocation: source === 'tree' ? null : COMPLEXITY_ALLOCATIONS[complexity] };
}
