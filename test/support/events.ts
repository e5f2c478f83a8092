import type { EventType, WorkflowEvent } from '../../src/domain/events.js';

/**
 * A stored-looking event for unit fixtures that need only some payload fields (or, for robustness
 * tests, wrong ones). The service itself never builds events like this: the engine's are checked by
 * the compiler and the store's are parsed by their schemas.
 */
export function fixtureEvent(
  base: Omit<WorkflowEvent, 'type' | 'payload'>,
  type: EventType,
  payload: Record<string, unknown>,
): WorkflowEvent {
  return { ...base, type, payload } as WorkflowEvent;
}
