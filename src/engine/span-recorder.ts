import type { ErrorInfo } from '../domain/errors.js';
import { newSpanId } from '../domain/ids.js';
import type { SpanFieldsByType, SpanRecord, SpanStatus, SpanType, SpanWrite } from '../domain/spans.js';

/**
 * Builds a run's spans (DESIGN §9) and hands them to its next commit. A span that starts and ends
 * before that commit is written once, already closed: a fast step costs one row per span, not an
 * insert plus an update.
 */
export class SpanRecorder {
  private pendingInserts = new Map<string, SpanRecord>();
  private pendingEnds: SpanWrite[] = [];

  constructor(
    private readonly context: { traceId: string; workflowId: string; tenantId: string },
    private readonly now: () => number,
  ) {}

  start<T extends SpanType>(
    type: T,
    parentId: string | null,
    nodeId: string | null,
    fields: SpanFieldsByType[T],
    startedAt = this.now(),
  ): string {
    const span: SpanRecord<T> = {
      spanId: newSpanId(),
      traceId: this.context.traceId,
      workflowId: this.context.workflowId,
      tenantId: this.context.tenantId,
      nodeId,
      parentId,
      type,
      startedAt,
      endedAt: null,
      status: null,
      error: null,
      fields,
    };
    this.pendingInserts.set(span.spanId, span as SpanRecord);
    return span.spanId;
  }

  end(
    spanId: string,
    status: SpanStatus,
    fields?: Partial<SpanFieldsByType[SpanType]>,
    error?: ErrorInfo | null,
  ): void {
    const endedAt = this.now();
    const pending = this.pendingInserts.get(spanId);
    if (pending) {
      pending.endedAt = endedAt;
      pending.status = status;
      pending.error = error ?? null;
      if (fields) pending.fields = { ...pending.fields, ...fields } as SpanRecord['fields'];
      return;
    }
    const { workflowId, tenantId } = this.context;
    const write: SpanWrite = { op: 'end', workflowId, tenantId, spanId, endedAt, status };
    if (error) write.error = error;
    if (fields) write.fields = fields;
    this.pendingEnds.push(write);
  }

  /** A span whose work is already over (a handoff, a guardrail check, a cache hit). */
  record<T extends SpanType>(
    type: T,
    parentId: string | null,
    nodeId: string | null,
    fields: SpanFieldsByType[T],
    status: SpanStatus = 'ok',
    startedAt?: number,
  ): string {
    const spanId = this.start(type, parentId, nodeId, fields, startedAt);
    const span = this.pendingInserts.get(spanId) as SpanRecord;
    span.endedAt = this.now();
    span.status = status;
    return spanId;
  }

  get isEmpty(): boolean {
    return this.pendingInserts.size === 0 && this.pendingEnds.length === 0;
  }

  /** Everything since the last drain: inserts first, so an end always finds its row. */
  drain(): SpanWrite[] {
    const writes: SpanWrite[] = [];
    for (const span of this.pendingInserts.values()) writes.push({ op: 'insert', span });
    for (const write of this.pendingEnds) writes.push(write);
    this.pendingInserts = new Map();
    this.pendingEnds = [];
    return writes;
  }
}
