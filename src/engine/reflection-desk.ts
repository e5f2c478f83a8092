import { AppError, NotFoundError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import type { Clock, WorkflowStore, WorkQueue } from '../domain/ports.js';
import type { NodeRecord, WorkflowRecord } from '../domain/records.js';
import { redactSecrets } from '../domain/redact.js';
import type { ReflectionRequest } from '../domain/reflection.js';
import { manualReflectionRefusal } from '../reflection/manual.js';
import { reflectionBudgetOf } from '../reflection/settings.js';
import { shuttingDownError } from './errors.js';
import { NODE_HANDLERS } from './nodes/table.js';
import type { TenantSpend } from './run/tenant-spend.js';
import { maxLlmCallsOf } from './run/tree-budgets.js';

/**
 * Reflection asked for by hand (docs/workflows.md#reflection, groundswell's `triggerReflection`): what the
 * `GET …/reflection` read shows and the `POST …/nodes/{nodeId}/reflect` request checks come from the
 * same facts, so the read's `refusal` is exactly the 409 a request would get.
 */
export interface ReflectionState {
  workflow: WorkflowRecord;
  nodes: NodeRecord[];
  requestCounts: ReadonlyMap<string, number>;
  requestsSent: number;
  maxLlmCalls: number;
  /** Why a request for this node would be refused now; undefined when it would be accepted. */
  refusal(node: NodeRecord): string | undefined;
}

export interface ReflectionDesk {
  /** Undefined when the tenant has no such workflow. */
  state(tenantId: string, workflowId: string): Promise<ReflectionState | undefined>;
  /** Reopens the failed workflow and queues it; see Executor.reflect. */
  reflect(
    tenantId: string,
    workflowId: string,
    nodeId: string,
    note: string | null,
  ): Promise<{ workflow: WorkflowRecord; request: ReflectionRequest } | undefined>;
}

export function createReflectionDesk(options: {
  store: WorkflowStore;
  queue: WorkQueue;
  clock: Clock;
  spend: TenantSpend;
  maxLlmCallsPerWorkflow: number;
  isStopping: () => boolean;
}): ReflectionDesk {
  const { store, queue, clock } = options;

  async function state(tenantId: string, workflowId: string): Promise<ReflectionState | undefined> {
    const workflow = await store.get(tenantId, workflowId);
    if (!workflow) return undefined;
    const [nodes, requestCounts, requestsSent] = await Promise.all([
      store.nodes(workflowId),
      store.reflectionRequestCounts(workflowId),
      store.requestsSent(workflowId),
    ]);
    const maxLlmCalls = maxLlmCallsOf(workflow.definition, options.maxLlmCallsPerWorkflow);
    const { maxAttempts } = reflectionBudgetOf(workflow.definition);
    return {
      workflow,
      nodes,
      requestCounts,
      requestsSent,
      maxLlmCalls,
      refusal: (record) =>
        manualReflectionRefusal({
          workflow,
          record,
          // The handler table says which node kinds can reflect by hand.
          kindReflects: NODE_HANDLERS[record.type].reflectOnRequest !== undefined,
          requestsForNode: requestCounts.get(record.id) ?? 0,
          maxPerNode: maxAttempts,
          requestsSent,
          maxLlmCalls,
        }),
    };
  }

  return {
    state,

    async reflect(tenantId, workflowId, nodeId, note) {
      if (options.isStopping()) throw shuttingDownError();
      const current = await state(tenantId, workflowId);
      if (!current) return undefined;
      const record = current.nodes.find((n) => n.id === nodeId);
      if (!record) throw new NotFoundError(`node ${nodeId} of workflow ${workflowId}`);
      const refusal = current.refusal(record);
      if (refusal) throw new AppError('CONFLICT', `cannot reflect on node ${nodeId}: ${refusal}`);
      // A tenant past its daily budget is told now, not by a reopened run failing again.
      (await options.spend.reserve(tenantId, 0))?.settle(0);
      const request: ReflectionRequest = {
        id: newId('rr'),
        workflowId,
        nodeId,
        reason: note === null ? null : redactSecrets(note),
        requestedAt: clock.now(),
      };
      const { maxAttempts } = reflectionBudgetOf(current.workflow.definition);
      const outcome = await store.requestReflection(tenantId, request, maxAttempts);
      if (!outcome) return undefined;
      if (!outcome.reopened) {
        throw new AppError(
          'CONFLICT',
          `cannot reflect on node ${nodeId}: the workflow is ${outcome.workflow.status} (another request reopened it)`,
        );
      }
      queue.enqueue(workflowId, tenantId);
      return { workflow: outcome.workflow, request };
    },
  };
}
