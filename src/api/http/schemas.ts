import { z } from 'zod';
import { ErrorInfoSchema } from '../../domain/errors.js';
import { EVENT_TYPES } from '../../domain/events.js';
import { CHECKPOINT_STATES } from '../../domain/records.js';
import { STATUSES } from '../../domain/status.js';
import { TotalsSchema } from './usage-totals.js';

/**
 * HTTP schemas shared by the route modules (docs/design.md#http-api-conventions). Route-specific shapes stay next to
 * their route; everything here is used by more than one module or by the OpenAPI document.
 */

export const ErrorDetailSchema = z.object({
  path: z
    .string()
    .describe('Dotted path of the field: `root.steps.0.agent`, `querystring.limit`, `headers.idempotency-key`.'),
  message: z.string().describe('What is wrong with it, in plain words.'),
});

export const ErrorBodySchema = z.object({
  statusCode: z.int().min(400).max(599).describe('The HTTP status, repeated.'),
  code: z.string().describe('Stable UPPER_SNAKE error code.'),
  error: z.string().describe('The HTTP status text.'),
  message: z.string(),
  details: z.array(ErrorDetailSchema).optional().describe('One entry per offending field.'),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/** The error responses a route can answer, for the OpenAPI document and the serializer. */
export function errorResponses<const C extends readonly number[]>(
  ...codes: C
): Record<C[number], typeof ErrorBodySchema> {
  const out: Record<number, typeof ErrorBodySchema> = {};
  for (const code of codes) out[code] = ErrorBodySchema;
  return out as Record<C[number], typeof ErrorBodySchema>;
}

export const IdParamsSchema = z.object({
  id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,100}$/, { message: 'must be a workflow id such as wf_…' })
    .describe('Workflow id (wf_…).'),
});

const IsoTime = z.iso.datetime().nullable();
const NullableErrorSchema = ErrorInfoSchema.nullable();

export const StatusSchema = z.enum(STATUSES);

export const ListQuerySchema = z.object({
  status: StatusSchema.optional().describe('Only workflows in this status.'),
  name: z.string().min(1).max(100).optional().describe('Only workflows of this name.'),
  correlationId: z.string().min(1).max(200).optional().describe('Only workflows submitted with this correlationId.'),
  parentWorkflowId: z.string().min(1).max(100).optional().describe('Only the child workflows of this workflow.'),
  cursor: z.string().min(1).max(500).optional().describe('nextCursor of the previous page.'),
  limit: z.coerce.number().int().min(1).max(100).default(20).describe('Page size, 1-100.'),
});

export const LinksSchema = z.object({
  self: z.string(),
  tree: z.string(),
  events: z.string(),
  cancel: z.string(),
  reflections: z.string(),
  metrics: z.string().describe('Efficiency record and reward, once the workflow is terminal.'),
  trace: z.string(),
});

export interface NodeView {
  id: string;
  name: string;
  type: string;
  status: z.infer<typeof StatusSchema>;
  attempts: number;
  startedAt: string | null;
  endedAt: string | null;
  durationMs: number | null;
  output: unknown;
  error: { code: string; message: string; details?: Record<string, unknown> } | null;
  childWorkflowId: string | null;
  spawnedWorkflowId: string | null;
  cacheKeys: string[];
  children: NodeView[];
}

/** Recursive, so it is registered under an id (`NodeView`) and referenced from the document. */
export const NodeViewSchema: z.ZodType<NodeView> = z.lazy(() =>
  z.object({
    id: z.string(),
    name: z.string(),
    type: z.string(),
    status: StatusSchema,
    attempts: z.int(),
    startedAt: IsoTime,
    endedAt: IsoTime,
    durationMs: z.number().nullable(),
    output: z.unknown(),
    error: NullableErrorSchema,
    childWorkflowId: z.string().nullable(),
    spawnedWorkflowId: z
      .string()
      .nullable()
      .describe('Set on the root node of a child workflow a model spawned (request_spawn_workflow): its workflow id.'),
    cacheKeys: z.array(z.string()).describe('Response-cache keys of this node’s model calls (GET /v1/cache/{key}).'),
    children: z
      .array(NodeViewSchema)
      .describe(
        "A workflow node's children end with the child workflow's root node; a node that spawned child " +
          'workflows lists their root nodes after its own children.',
      ),
  }),
);

export const WorkflowSummarySchema = z.object({
  id: z.string(),
  name: z.string(),
  status: StatusSchema,
  correlationId: z.string().nullable(),
  parentWorkflowId: z.string().nullable(),
  traceId: z.string(),
  error: NullableErrorSchema,
  cancelRequested: z.boolean(),
  checkpoint: z
    .object({
      state: z
        .enum(CHECKPOINT_STATES)
        .describe(
          'pending: the workflow waits (idle); approved: it runs on; rejected: it failed with CHECKPOINT_REJECTED.',
        ),
      reason: z
        .string()
        .nullable()
        .describe('The reason given with the approve or reject; null while pending or when none was given.'),
      at: IsoTime.describe('When it was decided; null while pending.'),
    })
    .nullable()
    .describe(
      'The human checkpoint of a critical task (allocation human_checkpoint: true), null for any other workflow: ' +
        'pending until POST …/approve or …/reject, one decision wins; the time of approval is `at` of an approved one.',
    ),
  createdAt: z.iso.datetime(),
  startedAt: IsoTime,
  endedAt: IsoTime,
  durationMs: z.number().nullable(),
  links: LinksSchema,
});
export type WorkflowSummary = z.infer<typeof WorkflowSummarySchema>;

export const WorkflowViewSchema = WorkflowSummarySchema.extend({
  output: z.unknown(),
  tree: NodeViewSchema.nullable(),
  totals: TotalsSchema,
});
export type WorkflowView = z.infer<typeof WorkflowViewSchema>;

export const WorkflowPageSchema = z.object({
  items: z.array(WorkflowSummarySchema),
  nextCursor: z.string().nullable(),
});

export const SubmitResponseSchema = z.object({
  id: z.string(),
  status: StatusSchema,
  traceId: z.string(),
  links: LinksSchema,
});

export const EventViewSchema = z.object({
  seq: z.int(),
  type: z.enum(EVENT_TYPES),
  nodeId: z.string().nullable(),
  at: z.iso.datetime(),
  payload: z.record(z.string(), z.unknown()),
});
export type EventView = z.infer<typeof EventViewSchema>;

export const EventPageSchema = z.object({
  items: z.array(EventViewSchema),
  nextAfter: z.int().describe('Pass as ?after= to read the next page.'),
});

export const EventsQuerySchema = z.object({
  after: z.coerce.number().int().min(0).default(0).describe('Return events with seq > after.'),
  limit: z.coerce.number().int().min(1).max(1000).default(100).describe('Page size, 1-1000.'),
});
