/**
 * Workflow events (DESIGN §9): groundswell's names, persisted with a per-workflow monotonic `seq`
 * and streamed over SSE with `id: <seq>`.
 */
export const EVENT_TYPES = [
  'workflowStart',
  'workflowEnd',
  'stepStart',
  'stepEnd',
  'error',
  'invalidResponse',
  'treeUpdated',
  'childAttached',
  'agentPromptStart',
  'agentPromptEnd',
  'toolInvocation',
  'retry',
  'reflectionStart',
  'reflectionEnd',
  'cacheHit',
  'cacheMiss',
  'spawnRequested',
  'checkpoint',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface WorkflowEvent {
  workflowId: string;
  tenantId: string;
  seq: number;
  type: EventType;
  nodeId: string | null;
  /** Epoch milliseconds. */
  at: number;
  payload: Record<string, unknown>;
}
