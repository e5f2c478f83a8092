import type { Allocation } from '../../domain/allocation.js';
import type { AgentSlots } from '../node-context.js';
import { createSemaphore } from './semaphore.js';

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
