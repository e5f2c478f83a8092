import { type ChildWorkflowNode, DEFAULTS, type WorkflowDefinition } from '../domain/definition.js';
import { AppError } from '../domain/errors.js';
import type { NodeRecord, WorkflowRecord } from '../domain/records.js';
import { planWorkflow } from './plan.js';
import type { Run } from './run.js';
import { renderValue } from './templates.js';

/**
 * A `workflow` node: a nested child workflow with its own rows, events and status, created when the
 * node first starts and resumed (not re-created) after a restart. Its input templates render
 * against the parent run; it inherits the parent's agents, correlation id and trace.
 */
export async function runChildWorkflowNode(
  run: Run,
  node: ChildWorkflowNode,
  record: NodeRecord,
  signal: AbortSignal,
  parentSpan: string,
): Promise<unknown> {
  const { services } = run;
  let child: WorkflowRecord | undefined = record.childWorkflowId
    ? await services.store.getById(record.childWorkflowId)
    : undefined;
  if (!child) {
    const maxDepth = run.definition.options?.limits?.maxDepth ?? DEFAULTS.limits.maxDepth;
    if (run.workflow.depth + 1 > maxDepth) {
      throw new AppError('LIMIT_EXCEEDED', `child workflows may nest at most ${maxDepth} deep`);
    }
    const { definition } = node;
    const childDefinition: WorkflowDefinition = {
      name: definition.name,
      agents: { ...run.agents, ...definition.agents },
      root: definition.root,
    };
    if (definition.input !== undefined) childDefinition.input = renderValue(definition.input, run.templateScope);
    if (definition.options) childDefinition.options = definition.options;
    if (run.workflow.correlationId) childDefinition.correlationId = run.workflow.correlationId;
    const planned = planWorkflow(childDefinition, {
      tenantId: run.workflow.tenantId,
      now: services.clock.now(),
      parent: { workflow: run.workflow, nodeId: record.id },
    });
    run.addWorkflow(planned);
    run.patchNode(record, { childWorkflowId: planned.workflow.id });
    run.emit('childAttached', record.id, {
      node: node.name,
      childWorkflowId: planned.workflow.id,
      name: definition.name,
    });
    run.emit('treeUpdated', record.id, { node: node.name });
    await run.flush();
    child = planned.workflow;
  }
  // DESIGN §9: a child workflow is a handoff, under which the child's own orchestrator span nests.
  const handoff = run.spans.record('handoff_span', parentSpan, record.id, {
    from_agent: 'orchestrator',
    to_agent: child.name,
    context_passed: { node: node.name, childWorkflowId: child.id },
  });
  const finished = await services.runChild(child, signal, handoff);
  if (finished.status === 'completed') return finished.output;
  // The parent's own cancellation reached the child: propagate it. A child cancelled on its own
  // (POST /v1/workflows/{childId}/cancel) is a failure of this node, not a cancel of the parent.
  if (finished.status === 'cancelled' && signal.aborted) throw signal.reason;
  if (finished.status === 'cancelled') {
    throw new AppError('CHILD_WORKFLOW_FAILED', `child workflow ${finished.id} was cancelled`);
  }
  const cause = finished.error ? `${finished.error.code}: ${finished.error.message}` : 'unknown error';
  throw new AppError('CHILD_WORKFLOW_FAILED', `child workflow ${finished.id} failed (${cause})`);
}
