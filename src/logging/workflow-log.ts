import type { Logger } from 'pino';
import type { EventBus } from '../domain/ports.js';

/**
 * One log line per failed workflow (id, code) at info: an operator reading the log sees failures
 * without turning on debug, and the engine stays free of logging (it only emits events). Nothing per
 * step: the hot path logs nothing (docs/design.md#storage). Returns the unsubscribe function.
 */
export function logFailedWorkflows(bus: EventBus, logger: Logger): () => void {
  const log = logger.child({ module: 'engine' });
  return bus.subscribeAll((event) => {
    if (event.type !== 'workflowEnd' || event.payload.status !== 'failed') return;
    log.info(
      { workflowId: event.workflowId, tenant: event.tenantId, code: event.payload.error?.code },
      'workflow failed',
    );
  });
}
