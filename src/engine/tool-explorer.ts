import type { ResponseCache } from '../domain/cache.js';
import { AppError, NotFoundError, ValidationError } from '../domain/errors.js';
import type { WorkflowStore } from '../domain/ports.js';
import type { ToolRegistry } from '../tools/registry.js';
import { ToolRefusal } from '../tools/tool.js';

export interface ToolExploration {
  tool: string;
  nodeId: string;
  isError: boolean;
  output: unknown;
}

/**
 * `POST /v1/workflows/{id}/nodes/{nodeId}/tools/{tool}` (docs/design.md#http-api-conventions): runs a read-only tool as
 * that node of that workflow, over what the store holds, so a person can see in Swagger UI what an
 * agent at that position would be told. Tenant-scoped through the workflow; a tool that changes
 * anything (spawning) is refused here, whatever the node's agent may do.
 */
export function createToolExplorer(options: { store: WorkflowStore; cache: ResponseCache; tools: ToolRegistry }) {
  const { store, cache, tools } = options;
  return {
    async explore(
      tenantId: string,
      workflowId: string,
      nodeId: string,
      toolName: string,
      input: unknown,
    ): Promise<ToolExploration> {
      // The workflow and node first: another tenant's workflow is a 404 whatever the tool, never a
      // 403 that answers for a workflow the caller cannot see.
      const workflow = await store.get(tenantId, workflowId);
      if (!workflow) throw new NotFoundError(`workflow ${workflowId}`);
      const nodes = new Map((await store.nodes(workflowId)).map((n) => [n.id, n]));
      const node = nodes.get(nodeId);
      if (!node) throw new NotFoundError(`node ${nodeId} of workflow ${workflowId}`);
      if (!tools.names().includes(toolName)) throw new NotFoundError(`tool ${toolName}`);
      if (!tools.isReadOnly(toolName)) {
        throw new AppError('FORBIDDEN', `tool "${toolName}" changes the workflow; only read-only tools run here`);
      }
      const invalid = tools.inputError(toolName, input);
      if (invalid !== undefined) throw new ValidationError(invalid, [{ path: 'body', message: invalid }]);
      const result = await tools.run(toolName, input, {
        tenantId,
        workflowId,
        node,
        nodes,
        cacheEntry: (key) => cache.info(tenantId, key),
        spawn: () => Promise.reject(new ToolRefusal('spawning is not available while exploring')),
        retrieve: () =>
          Promise.reject(new ToolRefusal('retrieval needs the prompt run: use GET /v1/corpora/{id}/search')),
      });
      if (result.fault !== undefined) throw result.fault;
      return { tool: toolName, nodeId, isError: result.isError, output: result.output };
    },
  };
}

export type ToolExplorer = ReturnType<typeof createToolExplorer>;
