import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { canonicalJson } from '../../domain/canonical-json.js';
import { WorkflowDefinitionSchema } from '../../domain/definition.js';
import { AppError, NotFoundError } from '../../domain/errors.js';
import type { WorkflowStore } from '../../domain/ports.js';
import type { NodeRecord, WorkflowRecord } from '../../domain/records.js';
import { isTerminal } from '../../domain/status.js';
import { asQueryError } from '../http/error-handler.js';
import { ownedWorkflow } from '../http/owned-workflow.js';
import {
  errorResponses,
  IdParamsSchema,
  ListQuerySchema,
  type NodeView,
  NodeViewSchema,
  StatusSchema,
  SubmitResponseSchema,
  WorkflowPageSchema,
  WorkflowViewSchema,
} from '../http/schemas.js';
import { liveDuration, toTotals, usageTotals } from '../http/usage-totals.js';
import {
  buildNodeTree,
  type ChildTrees,
  renderTreeText,
  toWorkflowSummary,
  toWorkflowView,
  workflowLinks,
} from './workflow-view.js';

/** The ports these routes use (route plugins get only what they need). */
type WorkflowRouteDeps = Pick<Deps, 'clock' | 'executor' | 'store' | 'traces'>;

const IdempotencyHeadersSchema = z.looseObject({
  'idempotency-key': z
    .string()
    .regex(/^[\x20-\x7E]{1,200}$/, { message: 'must be 1-200 printable ASCII characters' })
    .optional()
    .describe('Same key + same body within 24 h returns the original workflow (200); a different body is a 422.'),
});

const TreeQuerySchema = z.object({
  format: z.enum(['json', 'text']).default('json').describe('json, or text: one line per node.'),
});

const TreeJsonSchema = z.object({
  id: z.string(),
  name: z.string(),
  status: StatusSchema,
  tree: NodeViewSchema.nullable(),
});

/**
 * Loads the node rows of a workflow and, recursively, the root NodeView of every child workflow:
 * one a `workflow` node started (inline under that node) and one a model spawned (under the node
 * whose tool call spawned it, marked with its workflow id). `seen` guards against a corrupt
 * parent/child loop and collects the subtree whose figures count "with children".
 */
async function loadTree(
  store: WorkflowStore,
  workflowId: string,
  seen: Set<string> = new Set(),
): Promise<{ nodes: NodeRecord[]; childTrees: ChildTrees }> {
  seen.add(workflowId);
  const [nodes, children] = await Promise.all([store.nodes(workflowId), store.children(workflowId)]);
  const declared = new Set(nodes.flatMap((n) => (n.childWorkflowId === null ? [] : [n.childWorkflowId])));
  const declaredTrees = new Map<string, NodeView>();
  const spawnedTrees = new Map<string, NodeView[]>();
  const subtrees = await Promise.all(
    children
      .filter((child) => !seen.has(child.id))
      .map(async (child) => {
        const sub = await loadTree(store, child.id, seen);
        const spawned = !declared.has(child.id);
        return { child, spawned, tree: buildNodeTree(sub.nodes, sub.childTrees, spawned ? child.id : null) };
      }),
  );
  for (const { child, spawned, tree } of subtrees) {
    if (!tree) continue;
    if (!spawned) declaredTrees.set(child.id, tree);
    else if (child.parentNodeId !== null) {
      const under = spawnedTrees.get(child.parentNodeId) ?? [];
      under.push(tree);
      spawnedTrees.set(child.parentNodeId, under);
    }
  }
  return { nodes, childTrees: { declared: declaredTrees, spawned: spawnedTrees } };
}

/** The workflow with its node tree (child workflows inline) and its totals, own and with children. */
async function fullView(deps: WorkflowRouteDeps, workflow: WorkflowRecord) {
  const subtree = new Set<string>();
  const [{ nodes, childTrees }, usage] = await Promise.all([
    loadTree(deps.store, workflow.id, subtree),
    deps.traces.generationUsage(workflow.tenantId, workflow.traceId),
  ]);
  const duration = liveDuration(workflow.startedAt, workflow.endedAt, deps.clock.now());
  return toWorkflowView(workflow, nodes, childTrees, toTotals(usageTotals(usage, workflow.id, subtree), duration));
}

function submitBody(w: WorkflowRecord) {
  return { id: w.id, status: w.status, traceId: w.traceId, links: workflowLinks(w.id, w.traceId) };
}

// No body at all (a bare `curl -X POST`) is an approval without a note.
const ApproveBodySchema = z
  .strictObject({ note: z.string().min(1).max(1_000).optional().describe('Recorded with the approval.') })
  .nullish();
const RejectBodySchema = z.strictObject({
  reason: z.string().min(1).max(1_000).describe('Why: the workflow fails with it.'),
});

export async function workflowRoutes(app: FastifyInstance, opts: { deps: WorkflowRouteDeps }): Promise<void> {
  const { deps } = opts;
  const r = app.withTypeProvider<ZodTypeProvider>();

  const getOwned = (tenantId: string, id: string) => ownedWorkflow(deps.store, tenantId, id);

  r.post(
    '/v1/workflows',
    {
      schema: {
        operationId: 'submitWorkflow',
        tags: ['workflows'],
        summary: 'Submit a workflow',
        description: 'Validates and persists the definition, then runs it asynchronously (202 + Location).',
        headers: IdempotencyHeadersSchema,
        body: WorkflowDefinitionSchema,
        response: {
          200: SubmitResponseSchema.describe('Idempotent replay: the workflow created by the first request.'),
          202: SubmitResponseSchema.describe('Accepted: the workflow is queued.'),
          ...errorResponses(400, 401, 413, 415, 422, 429, 500),
        },
        responseDescriptions: {
          422: 'The Idempotency-Key was already used with a different body (IDEMPOTENCY_KEY_REUSED).',
        },
      },
    },
    async (request, reply) => {
      const key = request.headers['idempotency-key'];
      const idempotency =
        key === undefined
          ? undefined
          : // Canonical JSON: a retry that re-serialises the same body with its keys in another order
            // is the same request, not a reuse of the key.
            { key, bodyHash: createHash('sha256').update(canonicalJson(request.body)).digest('hex') };
      const result = await deps.executor.submit(request.tenantId, request.body, idempotency);
      switch (result.kind) {
        case 'created':
          return reply
            .code(202)
            .header('location', `/v1/workflows/${result.workflow.id}`)
            .send(submitBody(result.workflow));
        case 'replayed':
          return reply
            .code(200)
            .header('location', `/v1/workflows/${result.workflow.id}`)
            .send(submitBody(result.workflow));
        case 'conflict':
          throw new AppError(
            'IDEMPOTENCY_KEY_REUSED',
            'Idempotency-Key was already used with a different request body',
            {
              details: [
                {
                  path: 'headers.idempotency-key',
                  message: `was used by workflow ${result.workflowId} with a different body; use a new key`,
                },
              ],
            },
          );
      }
    },
  );

  r.get(
    '/v1/workflows',
    {
      schema: {
        operationId: 'listWorkflows',
        tags: ['workflows'],
        summary: 'List workflows, newest first',
        querystring: ListQuerySchema,
        response: { 200: WorkflowPageSchema, ...errorResponses(400, 401, 429, 500) },
        responseDescriptions: { 200: 'A page of workflows; pass nextCursor as ?cursor= for the next one.' },
      },
    },
    async (request) => {
      const { cursor, limit, ...filter } = request.query;
      const page = await deps.store.list(request.tenantId, filter, cursor ?? null, limit).catch(asQueryError);
      return { items: page.items.map(toWorkflowSummary), nextCursor: page.nextCursor };
    },
  );

  r.get(
    '/v1/workflows/:id',
    {
      schema: {
        operationId: 'getWorkflow',
        tags: ['workflows'],
        summary: 'A workflow: status, output and node tree',
        params: IdParamsSchema,
        response: { 200: WorkflowViewSchema, ...errorResponses(400, 401, 404, 429, 500) },
        responseDescriptions: { 200: 'The workflow.' },
      },
    },
    async (request) => fullView(deps, await getOwned(request.tenantId, request.params.id)),
  );

  r.get(
    '/v1/workflows/:id/tree',
    {
      schema: {
        operationId: 'getWorkflowTree',
        tags: ['workflows'],
        summary: 'Tree debugger: ?format=text gives one line per node, "<symbol> <name> [<status>]"',
        params: IdParamsSchema,
        querystring: TreeQuerySchema,
        response: {
          200: {
            description: 'The node tree',
            content: {
              'application/json': { schema: TreeJsonSchema },
              'text/plain': { schema: z.string().describe('Lines "<symbol> <name> [<status>]", indented by depth.') },
            },
          },
          ...errorResponses(400, 401, 404, 429, 500),
        },
      },
    },
    async (request, reply) => {
      const view = await fullView(deps, await getOwned(request.tenantId, request.params.id));
      if (request.query.format === 'text') {
        return reply.type('text/plain; charset=utf-8').send(renderTreeText(view));
      }
      return reply
        .type('application/json')
        .send({ id: view.id, name: view.name, status: view.status, tree: view.tree });
    },
  );

  /** The two answers to a human checkpoint (docs/design.md#complexity-allocation-selection-and-review). */
  const settle = async (tenantId: string, id: string, state: 'approved' | 'rejected', reason: string | null) => {
    await getOwned(tenantId, id);
    const workflow = await deps.executor.decide(tenantId, id, { state, reason });
    if (!workflow) throw new NotFoundError(`workflow ${id}`);
    return fullView(deps, workflow);
  };
  const checkpointDocs = {
    tags: ['workflows'],
    description:
      'Critical tasks wait, idle, with a `checkpoint` event (docs/design.md#complexity-allocation-selection-and-review). The decision is one conditional ' +
      'update: of racing approve, reject and cancel requests one wins, and a won decision runs the workflow once. ' +
      '409 when it is not waiting, saying why.',
    params: IdParamsSchema,
    response: { 202: WorkflowViewSchema, ...errorResponses(400, 401, 404, 409, 413, 415, 429, 500) },
  };
  const notWaiting =
    'The workflow is not waiting for approval: it has no checkpoint, it was already approved or rejected, ' +
    'it is cancelled, or it has already ended.';

  r.post(
    '/v1/workflows/:id/approve',
    {
      schema: {
        ...checkpointDocs,
        operationId: 'approveWorkflow',
        summary: 'Approve a workflow waiting at its human checkpoint: it runs',
        body: ApproveBodySchema,
        responseDescriptions: { 202: 'Approved: the workflow is queued to run.', 409: notWaiting },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await settle(request.tenantId, request.params.id, 'approved', request.body?.note ?? null)),
  );

  r.post(
    '/v1/workflows/:id/reject',
    {
      schema: {
        ...checkpointDocs,
        operationId: 'rejectWorkflow',
        summary: 'Reject a workflow waiting at its human checkpoint: it fails with the reason',
        body: RejectBodySchema,
        responseDescriptions: { 202: 'Rejected: the workflow fails with CHECKPOINT_REJECTED.', 409: notWaiting },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await settle(request.tenantId, request.params.id, 'rejected', request.body.reason)),
  );

  r.post(
    '/v1/workflows/:id/cancel',
    {
      schema: {
        operationId: 'cancelWorkflow',
        tags: ['workflows'],
        summary: 'Cancel a workflow and its children (sticky, also before it starts)',
        description: 'A workflow that already ended cannot be cancelled: 409 WORKFLOW_TERMINAL.',
        params: IdParamsSchema,
        response: { 202: WorkflowViewSchema, ...errorResponses(400, 401, 404, 409, 429, 500) },
        responseDescriptions: {
          202: 'Cancellation requested: the workflow, with cancelRequested set; it ends as cancelled.',
          409: 'The workflow already ended (WORKFLOW_TERMINAL); the message names its status.',
        },
      },
    },
    async (request, reply) => {
      const current = await getOwned(request.tenantId, request.params.id);
      if (isTerminal(current.status)) {
        // A finished workflow cannot be cancelled: say so instead of a 202 that changed nothing.
        throw new AppError('WORKFLOW_TERMINAL', `workflow ${current.id} is already ${current.status}`);
      }
      const workflow = await deps.executor.cancel(request.tenantId, request.params.id);
      if (!workflow) throw new NotFoundError(`workflow ${request.params.id}`);
      return reply.code(202).send(await fullView(deps, workflow));
    },
  );
}
