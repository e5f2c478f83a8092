import { z } from 'zod';
import { defineTool, type ToolContext } from './tool.js';

/** groundswell's introspection tools (DESIGN §10); names and result shapes are theirs. */

function childCount(context: ToolContext, nodeId: string): number {
  let count = 0;
  for (const node of context.nodes.values()) if (node.parentId === nodeId) count++;
  return count;
}

export const inspectCurrentNode = defineTool({
  definition: {
    name: 'inspect_current_node',
    description: 'Get information about the current workflow node including ID, name, status, and parent reference',
    input_schema: { type: 'object', properties: {}, required: [] },
  },
  input: z.object({}),
  run(_input, context) {
    const { node } = context;
    const parent = node.parentId ? context.nodes.get(node.parentId) : undefined;
    return {
      id: node.id,
      name: node.name,
      status: node.status,
      ...(parent ? { parentId: parent.id, parentName: parent.name } : {}),
      childCount: childCount(context, node.id),
      depth: node.depth,
    };
  },
});
