import type { WorkflowEvent } from '../domain/events.js';
import type { EventBus, EventListener } from '../domain/ports.js';

/**
 * Fans committed events out to live subscribers in this process (SSE streams). A listener that
 * throws is isolated: the publisher (the executor's commit path) and the other listeners go on.
 */
export function createInProcessEventBus(): EventBus {
  const listenersByWorkflow = new Map<string, Set<EventListener>>();

  return {
    publish(events: readonly WorkflowEvent[]): void {
      if (listenersByWorkflow.size === 0) return;
      for (const event of events) {
        const listeners = listenersByWorkflow.get(event.workflowId);
        if (!listeners) continue;
        // Copy: a listener may unsubscribe itself (or another) while we iterate.
        for (const listener of [...listeners]) {
          try {
            listener(event);
          } catch {
            // A broken subscriber (e.g. a closed socket) must not fail the commit that published.
          }
        }
      }
    },

    subscribe(workflowId: string, listener: EventListener): () => void {
      let listeners = listenersByWorkflow.get(workflowId);
      if (!listeners) {
        listeners = new Set();
        listenersByWorkflow.set(workflowId, listeners);
      }
      listeners.add(listener);
      let subscribed = true;
      return () => {
        if (!subscribed) return;
        subscribed = false;
        const current = listenersByWorkflow.get(workflowId);
        if (!current) return;
        current.delete(listener);
        // Drop empty sets so finished workflows do not leak map entries.
        if (current.size === 0) listenersByWorkflow.delete(workflowId);
      };
    },
  };
}
