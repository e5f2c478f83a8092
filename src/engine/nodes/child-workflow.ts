import type { ChildWorkflowNode, WorkflowDefinition } from '../../domain/definition.js';
import { AppError } from '../../domain/errors.js';
import { isTerminal } from '../../domain/status.js';
import { renderValue } from '../../domain/templates.js';
import type { NodeHandler, RunView } from '../node-context.js';

/**
 * `workflow`: a nested child workflow with its own rows, events and status, created through the
 * ChildLauncher when the node first starts and found again (not re-created) after a restart. Its
 * input templates render against the parent run; it inherits the parent's agents (merged under its
 * own), correlation id and trace. Durable like a prompt: the child's result is the parent's input.
 */
export const childWorkflowHandler: NodeHandler<ChildWorkflowNode> = {
  durable: true,

  async run(ctx, node, at) {
    const existing = at.record.childWorkflowId;
    const child = existing
      ? await ctx.children.find(existing)
      : await ctx.children.create({ nodeId: at.record.id, definition: childDefinition(ctx.view, node) });
    // docs/design.md#events-spans-metrics-and-rewards: a child workflow is a handoff, under which the child's own
    // orchestrator span nests.
    const handoff = ctx.journal.recordSpan({
      type: 'handoff_span',
      parentId: at.parentSpan,
      nodeId: at.record.id,
      fields: {
        from_agent: 'orchestrator',
        to_agent: child.name,
        context_passed: { node: node.name, childWorkflowId: child.id },
      },
    });
    // Only waiting now: the run's place goes back when no other strand of it works (run-place.ts).
    const finished = isTerminal(child.status)
      ? child
      : await ctx.place.waitOnChildren(() => ctx.children.run(child, at.signal, handoff));
    if (finished.status === 'completed') return finished.output;
    // The parent's own cancellation reached the child: propagate it. A child cancelled on its own
    // (POST /v1/workflows/{childId}/cancel) is a failure of this node, not a cancel of the parent.
    if (finished.status === 'cancelled' && at.signal.aborted) throw at.signal.reason;
    if (finished.status === 'cancelled') {
      throw new AppError('CHILD_WORKFLOW_FAILED', `child workflow ${finished.id} was cancelled`);
    }
    // A spent budget (the tree's requests, the tenant's money) is the parent's too: not reflectable,
    // under its own code, for asking the agent again would be another call the budget refuses.
    const code = finished.error?.code;
    if (code === 'LLM_CALL_LIMIT_EXCEEDED' || code === 'TENANT_BUDGET_EXCEEDED') {
      throw new AppError(code, `child workflow ${finished.id}: ${finished.error?.message}`);
    }
    const cause = finished.error ? `${finished.error.code}: ${finished.error.message}` : 'unknown error';
    throw new AppError('CHILD_WORKFLOW_FAILED', `child workflow ${finished.id} failed (${cause})`);
  },

  // Its input and agents here; its own tree is a scope of its own (names, templates, limits).
  check(node, c) {
    const child = node.definition;
    c.templates(child.input, `${c.path}.definition.input`);
    c.agents(child.agents ?? {}, `${c.path}.definition.agents`);
    c.child(child, c.path);
  },

  redact(node, redactor) {
    const definition = redactor.child(node.definition);
    return definition === node.definition ? node : { ...node, definition };
  },
};

function childDefinition(view: RunView, node: ChildWorkflowNode): WorkflowDefinition {
  const { definition } = node;
  const merged: WorkflowDefinition = {
    name: definition.name,
    agents: { ...view.definition.agents, ...definition.agents },
    root: definition.root,
  };
  if (definition.input !== undefined) merged.input = renderValue(definition.input, view.templateScope);
  if (definition.options) merged.options = definition.options;
  if (view.workflow.correlationId) merged.correlationId = view.workflow.correlationId;
  return merged;
}
