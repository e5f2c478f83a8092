import type { NodeRecord, WorkflowRecord } from '../domain/records.js';
import { isReflectable } from './policy.js';

/**
 * When a reflection asked for by hand (`POST /v1/workflows/{id}/nodes/{nodeId}/reflect`, docs/workflows.md#reflection) is refused, and why. Pure: the caller reads the facts and answers 409 with the
 * reason. The conditional update in the store checks the same state again, so a request racing
 * another (or a cancel) is refused there.
 */
export interface ManualReflectionFacts {
  workflow: Pick<WorkflowRecord, 'status' | 'parentWorkflowId' | 'cancelRequested'>;
  record: NodeRecord;
  /** Whether the node's kind can reflect by hand (the engine's handler table says). */
  kindReflects: boolean;
  /** Requests already made for this node, and the cap (the workflow's reflection maxAttempts). */
  requestsForNode: number;
  maxPerNode: number;
  /** Provider requests the workflow sent, and its maxLlmCalls. */
  requestsSent: number;
  maxLlmCalls: number;
}

export function manualReflectionRefusal(facts: ManualReflectionFacts): string | undefined {
  const { workflow, record } = facts;
  if (workflow.parentWorkflowId !== null) {
    return `workflow is a child of ${workflow.parentWorkflowId}: reflection by hand reopens a root workflow`;
  }
  if (workflow.status !== 'failed' || workflow.cancelRequested) {
    return `the workflow is ${workflow.cancelRequested ? 'cancelled' : workflow.status}: only a failed workflow is reopened`;
  }
  if (!facts.kindReflects) return `node "${record.name}" is a ${record.type} node: only prompt nodes reflect`;
  if (record.status !== 'failed')
    return `node "${record.name}" is ${record.status}: only a failed node is reflected on`;
  if (record.error === null || !isReflectable(record.error)) {
    return `node "${record.name}" failed with ${record.error?.code ?? 'no error'}, which reflection cannot fix`;
  }
  if (facts.requestsForNode >= facts.maxPerNode) {
    return `node "${record.name}" already had ${facts.requestsForNode} reflections asked by hand (at most ${facts.maxPerNode}, options.reflection.maxAttempts)`;
  }
  if (facts.requestsSent >= facts.maxLlmCalls) {
    return `the workflow has sent ${facts.requestsSent} provider requests of its maxLlmCalls ${facts.maxLlmCalls}`;
  }
  return undefined;
}
