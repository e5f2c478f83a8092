import type { ErrorInfo } from '../../domain/errors.js';
import { newSpanId } from '../../domain/ids.js';
import type {
  GenerationUsage,
  SpanFieldsByType,
  SpanRecord,
  SpanStatus,
  SpanType,
  SpanWrite,
} from '../../domain/spans.js';

type Generation = SpanFieldsByType['generation_span'];
/** What an open generation span counted so far, so that its end adds only the difference. */
type Counted = Pick<Generation, 'tokens_in' | 'tokens_out' | 'cost_usd'> & { simulated: boolean };

/**
 * Builds a run's spans (docs/design.md#events-spans-metrics-and-rewards) and hands them to its next commit. A span
 * that starts and ends
 * before that commit is written once, already closed: a fast step costs one row per span, not an
 * insert plus an update.
 */
export class SpanRecorder {
  private pendingInserts = new Map<string, SpanRecord>();
  private pendingEnds: SpanWrite[] = [];
  /** Open generation spans, by id: what they counted at their start. */
  private readonly openGenerations = new Map<string, Counted>();
  /** What the generation spans started or ended since the last drain add to the workflow's usage. */
  private usage: GenerationUsage;

  constructor(
    private readonly context: { traceId: string; workflowId: string; tenantId: string },
    private readonly now: () => number,
  ) {
    this.usage = zeroUsage(context.workflowId);
  }

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
    if (type === 'generation_span') this.countStart(span.spanId, fields as Generation);
    return span.spanId;
  }

  end(
    spanId: string,
    status: SpanStatus,
    fields?: Partial<SpanFieldsByType[SpanType]>,
    error?: ErrorInfo | null,
  ): void {
    const endedAt = this.now();
    this.countEnd(spanId, fields as Partial<Generation> | undefined);
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
    this.openGenerations.delete(spanId);
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

  /**
   * What the generation spans written since the last drain add to the workflow's totals, or
   * undefined when nothing: kept beside the spans so that a GET sums figures instead of re-reading
   * every span of the trace (journal.repo.ts). The same numbers as folding the spans.
   */
  drainUsage(): GenerationUsage | undefined {
    const { usage } = this;
    if (
      usage.calls === 0 &&
      usage.tokensIn === 0 &&
      usage.tokensOut === 0 &&
      usage.costUsd === 0 &&
      usage.simulatedCostUsd === 0
    ) {
      return undefined;
    }
    this.usage = zeroUsage(this.context.workflowId);
    return usage;
  }

  private countStart(spanId: string, fields: Generation): void {
    // Spans written before the `simulated` flag existed name their model only.
    const simulated = fields.simulated === true || fields.model.startsWith('sim/');
    const counted: Counted = { tokens_in: 0, tokens_out: 0, cost_usd: 0, simulated };
    if (!fields.cache_hit) this.usage.calls++;
    this.add(counted, fields);
    this.openGenerations.set(spanId, counted);
  }

  private countEnd(spanId: string, fields: Partial<Generation> | undefined): void {
    const counted = this.openGenerations.get(spanId);
    if (counted === undefined) return;
    this.openGenerations.delete(spanId);
    if (fields) this.add(counted, fields);
  }

  /** Counts the difference between what `counted` holds and the values `fields` sets. */
  private add(counted: Counted, fields: Partial<Generation>): void {
    const { usage } = this;
    if (fields.tokens_in !== undefined) {
      usage.tokensIn += fields.tokens_in - counted.tokens_in;
      counted.tokens_in = fields.tokens_in;
    }
    if (fields.tokens_out !== undefined) {
      usage.tokensOut += fields.tokens_out - counted.tokens_out;
      counted.tokens_out = fields.tokens_out;
    }
    if (fields.cost_usd !== undefined) {
      const delta = fields.cost_usd - counted.cost_usd;
      if (counted.simulated) usage.simulatedCostUsd += delta;
      else usage.costUsd += delta;
      counted.cost_usd = fields.cost_usd;
    }
  }
}

function zeroUsage(workflowId: string): GenerationUsage {
  return { workflowId, calls: 0, tokensIn: 0, tokensOut: 0, costUsd: 0, simulatedCostUsd: 0 };
}
