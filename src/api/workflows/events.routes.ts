import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { AppError, ValidationError } from '../../domain/errors.js';
import type { WorkflowEvent } from '../../domain/events.js';
import type { WorkflowRecord } from '../../domain/records.js';
import { isTerminal } from '../../domain/status.js';
import { ownedWorkflow } from '../http/owned-workflow.js';
import { EventPageSchema, EventsQuerySchema, errorResponses, IdParamsSchema } from '../http/schemas.js';
import { toEventFrame, toEventView } from './workflow-view.js';

/** The ports these routes use (route plugins get only what they need). */
type EventRouteDeps = Pick<Deps, 'config' | 'events' | 'store'>;

const BACKLOG_PAGE = 1000;

/** `Last-Event-ID` (sent by EventSource on reconnect) wins over `?after=`. */
function resumePoint(request: FastifyRequest, after: number): number {
  const header = request.headers['last-event-id'];
  if (header === undefined || header === '') return after;
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || !/^\d{1,15}$/.test(value.trim())) {
    throw new ValidationError('last-event-id: must be a non-negative integer (an event seq)', [
      { path: 'headers.last-event-id', message: 'must be a non-negative integer (an event seq)' },
    ]);
  }
  return Number(value.trim());
}

/** Open streams per tenant, bounded by MAX_SSE_STREAMS_PER_TENANT (docs/design.md#security). */
class StreamSlots {
  private readonly open = new Map<string, number>();
  constructor(private readonly perTenant: number) {}

  /** Takes a slot or throws a 429; the returned function gives it back (once). */
  take(tenantId: string): () => void {
    const count = this.open.get(tenantId) ?? 0;
    if (count >= this.perTenant) {
      throw new AppError(
        'TOO_MANY_STREAMS',
        `this API key already has ${count} open event streams (MAX_SSE_STREAMS_PER_TENANT); close one or read JSON pages`,
        { retryAfterMs: 5_000 },
      );
    }
    this.open.set(tenantId, count + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.open.get(tenantId) ?? 1) - 1;
      if (left === 0) this.open.delete(tenantId);
      else this.open.set(tenantId, left);
    };
  }
}

/**
 * Streams a workflow's events as SSE. Order of operations matters: subscribe first (buffering),
 * then read the backlog, then flush the buffer skipping seqs already sent, so no event committed
 * while the backlog is read can be lost or sent twice.
 */
async function stream(
  deps: EventRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  workflow: WorkflowRecord,
  after: number,
  open: Set<() => void>,
  releaseSlot: () => void,
): Promise<void> {
  const workflowId = workflow.id;
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();

  let lastSent = after;
  let live = false;
  let closed = false;
  const buffered: WorkflowEvent[] = [];

  // Frames of one publication (a commit's events) go out in one write: one chunk, one syscall.
  let unsent = '';
  const flush = (): void => {
    if (unsent === '' || res.writableEnded) return;
    res.write(unsent);
    unsent = '';
  };
  const finish = (): void => {
    if (closed) return;
    closed = true;
    releaseSlot();
    unsubscribe();
    clearInterval(keepAlive);
    open.delete(finish);
    flush();
    if (!res.writableEnded) res.end();
  };
  const send = (event: WorkflowEvent): void => {
    if (closed || event.seq <= lastSent) return;
    if (unsent === '') queueMicrotask(flush);
    unsent += toEventFrame(event);
    lastSent = event.seq;
    if (event.type === 'workflowEnd') finish();
  };
  const readBacklog = async (): Promise<void> => {
    for (;;) {
      const page = await deps.store.events(workflowId, lastSent, BACKLOG_PAGE);
      for (const event of page) send(event);
      if (closed || page.length < BACKLOG_PAGE) return;
    }
  };

  const unsubscribe = deps.events.subscribe(
    workflowId,
    (event) => {
      if (live) send(event);
      else buffered.push(event);
    },
    after,
  );
  const keepAlive = setInterval(() => {
    if (!closed) res.write(': keep-alive\n\n');
  }, deps.config.SSE_KEEPALIVE_MS);
  keepAlive.unref();
  open.add(finish);
  res.on('close', finish);

  try {
    await readBacklog();
    live = true;
    buffered.sort((a, b) => a.seq - b.seq);
    for (const event of buffered.splice(0)) send(event);
    if (closed) return;
    // Finished when the route read it: the backlog read since holds every event, workflowEnd or not.
    if (isTerminal(workflow.status)) return finish();
    // Running then, and read from the start: its end comes as a workflowEnd event (its terminal
    // commit carries one), so no second read. A resumed stream may start past that event.
    if (after === 0) return;
    const now = await deps.store.getById(workflowId);
    if (now && isTerminal(now.status)) {
      // Anything committed before the terminal status is readable now; send it, then close.
      await readBacklog();
      finish();
    }
  } catch (err) {
    // Headers are gone: the error cannot become a JSON answer, so log it and end the stream.
    request.log.error({ err, workflowId }, 'event stream failed');
    finish();
  }
}

export async function eventRoutes(app: FastifyInstance, opts: { deps: EventRouteDeps }): Promise<void> {
  const { deps } = opts;
  const r = app.withTypeProvider<ZodTypeProvider>();
  /** Open streams, ended before the server closes so shutdown does not wait on idle clients. */
  const open = new Set<() => void>();
  const slots = new StreamSlots(deps.config.MAX_SSE_STREAMS_PER_TENANT);
  app.addHook('preClose', async () => {
    for (const finish of [...open]) finish();
  });

  r.get(
    '/v1/workflows/:id/events',
    {
      schema: {
        operationId: 'listWorkflowEvents',
        tags: ['events'],
        summary: 'Workflow events: a JSON page, or SSE with Accept: text/event-stream',
        description:
          'SSE frames are `id: <seq>`, `event: <type>`, `data: <event JSON>`; resume with Last-Event-ID or ?after=. ' +
          'The stream closes after workflowEnd (at once when the workflow is already finished).',
        params: IdParamsSchema,
        querystring: EventsQuerySchema,
        response: {
          200: {
            description: 'A page of events, or the event stream',
            content: {
              'application/json': { schema: EventPageSchema },
              'text/event-stream': {
                schema: z
                  .string()
                  .describe('SSE frames: id (the seq), event (the type) and data (the event JSON) lines.'),
              },
            },
          },
          ...errorResponses(400, 401, 404, 429, 500),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const workflow = await ownedWorkflow(deps.store, request.tenantId, id);

      if ((request.headers.accept ?? '').includes('text/event-stream')) {
        const after = resumePoint(request, request.query.after);
        const releaseSlot = slots.take(request.tenantId);
        await stream(deps, request, reply, workflow, after, open, releaseSlot);
        return reply;
      }

      const events = await deps.store.events(id, request.query.after, request.query.limit);
      const last = events.at(-1);
      // Set explicitly: the response schema is chosen by content type.
      return reply
        .type('application/json')
        .send({ items: events.map(toEventView), nextAfter: last ? last.seq : request.query.after });
    },
  );
}
