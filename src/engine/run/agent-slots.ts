import { promptNodesOf, type WorkflowDefinition } from '../../domain/definition.js';
import type { Complexity } from '../../domain/task.js';
import { explainComplexity } from '../../metrics/complexity.js';
import { type Allocation, COMPLEXITY_ALLOCATIONS } from '../../routing/allocation.js';
import type { AgentSlots } from '../node-context.js';
import { createSemaphore } from './semaphore.js';

/**
 * A workflow's complexity and the allocation it runs under
 * (docs/design.md#complexity-allocation-selection-and-review). The allocation applies only
 * when the task is described (a declared complexity or signals): a bare tree still has a
 * complexity (for `model: "auto"` and the metrics) but keeps the parallelism and the concurrency
 * it was written with — its client did not ask to be routed.
 */
export function routingOf(definition: Pick<WorkflowDefinition, 'task' | 'root'>): {
  complexity: Complexity;
  allocation: Allocation | null;
} {
  const { complexity, source } = explainComplexity(definition.task, promptNodesOf(definition.root).size);
  return { complexity, allocation: source === 'tree' ? null : COMPLEXITY_ALLOCATIONS[complexity] };
}

/** `max_agents` of a routed workflow's allocation: how many of its agents may work at once. */
export function agentSlots(allocation: Allocation | null): AgentSlots {
  if (!allocation) return { run: (_signal, work) => work() };
  const slots = createSemaphore(allocation.max_agents);
  return {
    async run(signal, work) {
      await slots.acquire(signal);
      try {
        return await work();
      } finally {
        slots.release();
      }
    },
  };
}
