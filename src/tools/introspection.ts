import { z } from 'zod';
import { NameSchema } from '../domain/names.js';
import type { NodeRecord } from '../domain/records.js';
import { defineTool, type ToolContext, ToolRefusal } from './tool.js';

/**
 * groundswell's introspection tools (docs/design.md#agent-tools): their names, descriptions and result shapes.
 * They answer from the calling run's own node records — what the run has committed — so an agent
 * sees its position and its workflow's real outputs, and nothing of any other workflow.
 */

function childrenOf(context: ToolContext, nodeId: string): NodeRecord[] {
  const children: NodeRecord[] = [];
  for (const node of context.nodes.values()) if (node.parentId === nodeId) children.push(node);
  return children.sort((a, b) => a.position - b.position);
}

const brief = (node: NodeRecord) => ({ id: node.id, name: node.name, status: node.status });

export const inspectCurrentNode = defineTool({
  name: 'inspect_current_node',
  description: 'Get information about the current workflow node including ID, name, status, and parent reference',
  input: z.object({}),
  readOnly: true,
  run(_input, context) {
    const { node } = context;
    const parent = node.parentId ? context.nodes.get(node.parentId) : undefined;
    return {
      id: node.id,
      name: node.name,
      status: node.status,
      ...(parent ? { parentId: parent.id, parentName: parent.name } : {}),
      childCount: childrenOf(context, node.id).length,
      depth: node.depth,
    };
  },
});

export const readAncestorChain = defineTool({
  name: 'read_ancestor_chain',
  description: 'Get all ancestor nodes from current position up to the root workflow',
  input: z.object({
    maxDepth: z.int().min(1).max(64).optional().describe('Maximum ancestors to return (default: all)'),
  }),
  readOnly: true,
  run({ maxDepth }, context) {
    const ancestors: Array<{ id: string; name: string; status: string; depth: number }> = [];
    // Bounded by the node count: a corrupt parent loop cannot spin.
    let parentId = context.node.parentId;
    while (parentId !== null && ancestors.length < context.nodes.size) {
      const parent = context.nodes.get(parentId);
      if (!parent) break;
      ancestors.push({ ...brief(parent), depth: parent.depth });
      parentId = parent.parentId;
    }
    return {
      ancestors: maxDepth === undefined ? ancestors : ancestors.slice(0, maxDepth),
      totalDepth: ancestors.length,
    };
  },
});

export const listSiblingsChildren = defineTool({
  name: 'list_siblings_children',
  description: 'List sibling or child nodes relative to current position',
  input: z.object({ type: z.enum(['siblings', 'children']).describe('Type of nodes to list') }),
  readOnly: true,
  run({ type }, context) {
    const { node } = context;
    const nodes =
      type === 'children'
        ? childrenOf(context, node.id)
        : node.parentId === null
          ? []
          : childrenOf(context, node.parentId).filter((sibling) => sibling.id !== node.id);
    return { type, nodes: nodes.map(brief) };
  },
});

export const inspectPriorOutputs = defineTool({
  name: 'inspect_prior_outputs',
  description: 'Get outputs from prior steps or prompt executions',
  input: z.object({
    nodeId: z.string().max(100).optional().describe('Specific node ID to inspect (default: most recent)'),
    count: z.int().min(1).max(50).optional().describe('Number of prior outputs to return (default: 1)'),
  }),
  readOnly: true,
  run({ nodeId, count = 1 }, context) {
    const show = (node: NodeRecord) => ({
      nodeId: node.id,
      name: node.name,
      type: node.type,
      output: node.output,
      cacheKeys: node.cacheKeys,
      endedAt: node.endedAt,
    });
    if (nodeId !== undefined) {
      const node = context.nodes.get(nodeId);
      if (!node) throw new ToolRefusal(`no node "${nodeId}" in this workflow`);
      if (node.status !== 'completed') throw new ToolRefusal(`node "${node.name}" has no output yet (${node.status})`);
      return { outputs: [show(node)] };
    }
    // Prior: not this node, not its containers (their output is made of this node's), and — when it
    // has ended, as when explored afterwards — nothing that ended after it.
    const ancestors = new Set<string>();
    for (let id = context.node.parentId; id !== null; id = context.nodes.get(id)?.parentId ?? null) {
      ancestors.add(id);
    }
    const until = context.node.endedAt ?? Number.POSITIVE_INFINITY;
    const completed = [...context.nodes.values()]
      .filter(
        (node) =>
          node.status === 'completed' &&
          node.id !== context.node.id &&
          !ancestors.has(node.id) &&
          (node.endedAt ?? 0) <= until,
      )
      .sort((a, b) => (b.endedAt ?? 0) - (a.endedAt ?? 0) || (b.id < a.id ? -1 : 1));
    return { outputs: completed.slice(0, count).map(show) };
  },
});

export const inspectCacheStatus = defineTool({
  name: 'inspect_cache_status',
  description: 'Check if a prompt response is cached',
  input: z.object({ promptHash: z.string().min(1).max(512).describe('Hash of the prompt to check') }),
  readOnly: true,
  async run({ promptHash }, context) {
    const entry = await context.cacheEntry(promptHash);
    if (!entry) return { exists: false, key: promptHash };
    return { exists: true, key: entry.key, createdAt: new Date(entry.createdAt).toISOString(), hits: entry.hits };
  },
});

export const requestSpawnWorkflow = defineTool({
  name: 'request_spawn_workflow',
  description: 'Request to spawn a new child workflow dynamically',
  input: z.object({
    // The API's own name rule (a submitted workflow's): a name the model writes reaches the store,
    // the tree debugger and terminals, so no control, bidi or format character and no markup.
    name: NameSchema.describe('Name for the new workflow: 1-100 letters, digits, spaces, "_" or "-"'),
    description: z.string().min(1).max(20_000).describe('Description of what the workflow should do'),
  }),
  readOnly: false,
  run(input, context) {
    return context.spawn(input);
  },
});

export const INTROSPECTION_TOOLS = [
  inspectCurrentNode,
  readAncestorChain,
  listSiblingsChildren,
  inspectPriorOutputs,
  inspectCacheStatus,
  requestSpawnWorkflow,
];
