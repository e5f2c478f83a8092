import type { Routing } from '../../domain/allocation.js';
import { childrenOf, type WorkflowDefinition, type WorkflowNode } from '../../domain/definition.js';
import { newId, newTraceId } from '../../domain/ids.js';
import type { NewWorkflow } from '../../domain/ports.js';
import type { NodeRecord, WorkflowRecord } from '../../domain/records.js';
import { routingOf } from './routing.js';

/**
 * Turns a definition into the rows the store persists: one workflow row and one node row per node
 * of the tree (child workflows get their own rows when their node starts).
 */
export interface PlanParent {
  workflow: WorkflowRecord;
  nodeId: string;
}

export function planWorkflow(
  definition: WorkflowDefinition,
  options: {
    tenantId: string;
    now: number;
    parent?: PlanParent;
    /** Its routing when the caller settled it already (a submission does, for agent selection). */
    routing?: Routing;
  },
): NewWorkflow {
  const id = newId('wf');
  const parent = options.parent;
  const workflow: WorkflowRecord = {
    id,
    tenantId: options.tenantId,
    name: definition.name,
    status: 'idle',
    correlationId: definition.correlationId ?? null,
    parentWorkflowId: parent?.workflow.id ?? null,
    parentNodeId: parent?.nodeId ?? null,
    rootWorkflowId: parent?.workflow.rootWorkflowId ?? id,
    depth: parent ? parent.workflow.depth + 1 : 0,
    traceId: parent?.workflow.traceId ?? newTraceId(),
    definition,
    output: null,
    error: null,
    cancelRequested: false,
    checkpoint: null,
    routing: options.routing ?? routingOf(definition),
    createdAt: options.now,
    startedAt: null,
    endedAt: null,
  };
  const nodes: NodeRecord[] = [];
  const visit = (node: WorkflowNode, parentId: string | null, position: number, depth: number) => {
    const record: NodeRecord = {
      id: newId('nd'),
      workflowId: id,
      parentId,
      name: node.name,
      type: node.type,
      position,
      depth,
      status: 'idle',
      attempts: 0,
      output: null,
      error: null,
      childWorkflowId: null,
      cacheKeys: [],
      startedAt: null,
      endedAt: null,
    };
    nodes.push(record);
    for (const [i, step] of childrenOf(node).entries()) visit(step, record.id, i, depth + 1);
  };
  visit(definition.root, null, 0, 0);
  return { workflow, nodes };
}
