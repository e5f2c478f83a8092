import type { WorkflowEvent } from '../domain/events.js';
import type { EventBus, EventListener } from '../domain/ports.js';

/** Calls a listener; a broken subscriber (e.g. a closed socket) must not fail the commit that published. */
function deliver(listener: EventListener, event: WorkflowEvent): void {
  try {
    listener(event);
  } catch {
    // Isolated on purpose: the publisher and the other listeners go on.
  }
}

/**
 * Fans committed events out to live subscribers in this process: SSE streams (per workflow) and
 * telemetry (every workflow). A listener that throws is isolated: the publisher (the executor's
 * commit path) and the other listeners go on.
 */
export function createInProcessEventBus(): EventBus {
  const listenersByWorkflow = new Map<string, Set<EventListener>>();
  const listenersOfAll = new Set<EventListener>();

  return {
    publish(events: readonly WorkflowEvent[]): void {
      if (listenersByWorkflow.size === 0 && listenersOfAll.size === 0) return;
      for (const event of events) {
        // Copies: a listener may unsubscribe itself (or another) while we iterate.
        if (listenersOfAll.size > 0) for (const listener of [...listenersOfAll]) deliver(listener, event);
        const listeners = listenersByWorkflow.get(event.workflowId);
        if (!listeners) continue;
        for (const listener of [...listeners]) deliver(listener, event);
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

    subscribeAll(listener: EventListener): () => void {
      // Wrapped so that subscribing the same function twice gives two independent subscriptions.
      const entry: EventListener = (event) => listener(event);
      listenersOfAll.add(entry);
      return () => {
        listenersOfAll.delete(entry);
      };
    },
  };
}
