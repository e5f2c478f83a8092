import type { NodeType, WorkflowNode } from '../../domain/definition.js';
import type { NodeHandler } from '../node-context.js';
import { childWorkflowHandler } from './child-workflow.js';
import { parallelHandler, sequenceHandler } from './containers.js';
import { promptHandler } from './prompt/prompt.js';
import { reviewHandler } from './review.js';

/**
 * Every node kind and how it runs (docs/design.md#architecture-and-floors): the one place a kind is dispatched on.
 * Exhaustive
 * over `NodeType`, so a new kind does not compile until it has a handler.
 */
type Handlers = { [K in NodeType]: NodeHandler<Extract<WorkflowNode, { type: K }>> };

export const NODE_HANDLERS: Handlers = {
  prompt: promptHandler,
  sequence: sequenceHandler,
  parallel: parallelHandler,
  review: reviewHandler,
  workflow: childWorkflowHandler,
};

export function handlerOf<N extends WorkflowNode>(node: N): NodeHandler<N> {
  // The table is keyed by the node's own type, so the entry handles exactly this node type.
  return NODE_HANDLERS[node.type] as unknown as NodeHandler<N>;
}
