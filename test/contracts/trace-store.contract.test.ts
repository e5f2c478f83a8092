import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/domain/errors.js';
import { newSpanId } from '../../src/domain/ids.js';
import type { NewWorkflow, TraceStore } from '../../src/domain/ports.js';
import type { SpanFieldsByType, SpanRecord, SpanType } from '../../src/domain/spans.js';
import { newWorkflow } from '../support/store-fixtures.js';
import { WORKFLOW_STORE_ADAPTERS as ADAPTERS, type OpenedStore } from './workflow-store-adapters.js';

let fx: OpenedStore;
let traces: TraceStore;
let root: NewWorkflow;

const T0 = 1_700_000_000_000;

describe.each(ADAPTERS)('TraceStore contract: $name', (adapter) => {
  afterEach(async () => {
    await fx.close();
  });

  beforeEach(async () => {
    fx = await adapter.open();
    traces = fx.traces;
    root = newWorkflow({ tenantId: 'acme', correlationId: 'session-1' });
    await fx.store.create(root);
  });

  function span<T extends SpanType>(
    type: T,
    fields: SpanFieldsByType[T],
    extra: Partial<Omit<SpanRecord<T>, 'type' | 'fields'>> = {},
    on: NewWorkflow = root,
  ): SpanRecord<T> {
    return {
      spanId: newSpanId(),
      traceId: on.workflow.traceId,
      workflowId: on.workflow.id,
      tenantId: on.workflow.tenantId,
      nodeId: null,
      parentId: null,
      type,
      startedAt: T0,
      endedAt: null,
      status: null,
      error: null,
      fields,
      ...extra,
    };
  }

  const generation = (extra: Partial<SpanRecord<'generation_span'>> = {}, on: NewWorkflow = root) =>
    span(
      'generation_span',
      {
        model: 'sim/sonnet',
        tokens_in: 0,
        tokens_out: 0,
        latency_ms: 0,
        cache_hit: false,
        cache_key: 'k1',
        cost_usd: 0,
      },
      extra,
      on,
    );

  const orchestrator = (on: NewWorkflow = root) => span('agent_span', { agent_name: 'orchestrator' }, {}, on);

  async function spansOf(traceId = root.workflow.traceId, tenantId = 'acme'): Promise<SpanRecord[]> {
    return (await traces.trace(tenantId, traceId))?.spans ?? [];
  }

  describe('span writes (ChangeSet.spans)', () => {
    it('inserts an open span and ends it in a later commit, replacing the fields the end carries', async () => {
      const agent = orchestrator();
      const gen = generation({ parentId: agent.spanId, nodeId: root.nodes[1]!.id, startedAt: T0 + 5 });
      await fx.store.commit({
        spans: [
          { op: 'insert', span: agent },
          { op: 'insert', span: gen },
        ],
      });
      expect(await spansOf()).toEqual([agent, gen]);

      await fx.store.commit({
        spans: [
          {
            op: 'end',
            workflowId: gen.workflowId,
            tenantId: gen.tenantId,
            spanId: gen.spanId,
            endedAt: T0 + 900,
            status: 'ok',
            // A null is stored as null (json_patch would drop the key); undefined is left out.
            fields: {
              tokens_in: 120,
              tokens_out: 30,
              latency_ms: 895,
              cost_usd: 0.0012,
              cache_key: null,
              model: undefined,
            },
          },
        ],
      });
      const [, ended] = await spansOf();
      expect(ended).toEqual({
        ...gen,
        endedAt: T0 + 900,
        status: 'ok',
        fields: { ...gen.fields, tokens_in: 120, tokens_out: 30, latency_ms: 895, cost_usd: 0.0012, cache_key: null },
      });
    });

    it('replaces object fields whole instead of merging them deeply', async () => {
      const custom = span('custom_span', { operation_name: 'review_loop', metadata: { round: 1, keep: true } });
      await fx.store.commit({ spans: [{ op: 'insert', span: custom }] });
      await fx.store.commit({
        spans: [
          {
            op: 'end',
            workflowId: custom.workflowId,
            tenantId: custom.tenantId,
            spanId: custom.spanId,
            endedAt: T0 + 1,
            status: 'ok',
            fields: { metadata: { round: 2 } },
          },
        ],
      });
      expect((await spansOf())[0]?.fields).toEqual({ operation_name: 'review_loop', metadata: { round: 2 } });
    });

    it('closes a span once: a second end is ignored, so is an end of an unknown span', async () => {
      const fn = span('function_span', {
        function_name: 'read_file',
        arguments: { path: 'a.ts' },
        result: null,
        success: false,
      });
      await fx.store.commit({ spans: [{ op: 'insert', span: fn }] });
      await fx.store.commit({
        spans: [
          {
            op: 'end',
            workflowId: fn.workflowId,
            tenantId: fn.tenantId,
            spanId: fn.spanId,
            endedAt: T0 + 10,
            status: 'error',
            error: { code: 'TOOL_FAILED', message: 'ENOENT' },
            fields: { success: false },
          },
        ],
      });
      await fx.store.commit({
        spans: [
          {
            op: 'end',
            workflowId: fn.workflowId,
            tenantId: fn.tenantId,
            spanId: fn.spanId,
            endedAt: T0 + 99,
            status: 'ok',
            fields: { success: true, result: 'late' },
          },
          {
            op: 'end',
            workflowId: fn.workflowId,
            tenantId: fn.tenantId,
            spanId: 'span_unknown',
            endedAt: T0,
            status: 'ok',
          },
        ],
      });
      expect(await spansOf()).toEqual([
        { ...fn, endedAt: T0 + 10, status: 'error', error: { code: 'TOOL_FAILED', message: 'ENOENT' } },
      ]);
    });

    it('inserts an already-ended span, and an insert + end in one change set apply in order', async () => {
      const guard = span(
        'guardrail_span',
        { guardrail_name: 'input_validation', triggered: false, blocking: true },
        { endedAt: T0 + 1, status: 'ok' },
      );
      const handoff = span('handoff_span', { from_agent: 'orchestrator', to_agent: 'writer' });
      await fx.store.commit({
        spans: [
          { op: 'insert', span: guard },
          { op: 'insert', span: handoff },
          {
            op: 'end',
            workflowId: handoff.workflowId,
            tenantId: handoff.tenantId,
            spanId: handoff.spanId,
            endedAt: T0 + 2,
            status: 'ok',
            fields: { context_passed: { keys: ['pr'] } },
          },
        ],
      });
      expect(await spansOf()).toEqual([
        guard,
        { ...handoff, endedAt: T0 + 2, status: 'ok', fields: { ...handoff.fields, context_passed: { keys: ['pr'] } } },
      ]);
    });

    it('commits spans atomically with the rest of the change set', async () => {
      const open = orchestrator();
      await fx.store.commit({ spans: [{ op: 'insert', span: open }] });
      const failing = fx.store.commit({
        nodes: [{ id: 'nd_missing', status: 'completed' }],
        spans: [
          { op: 'insert', span: generation() },
          {
            op: 'end',
            workflowId: open.workflowId,
            tenantId: open.tenantId,
            spanId: open.spanId,
            endedAt: T0 + 5,
            status: 'ok',
          },
        ],
      });
      await expect(failing).rejects.toThrow(/nd_missing/);
      expect(await spansOf()).toEqual([open]);
    });

    it('fails the change set on a corrupt write: an end time without a status, or the reverse', async () => {
      const open = orchestrator();
      await fx.store.commit({ spans: [{ op: 'insert', span: open }] });
      await expect(
        fx.store.commit({
          workflows: [{ id: root.workflow.id, status: 'running' }],
          spans: [{ op: 'insert', span: generation({ endedAt: T0 + 1 }) }],
        }),
      ).rejects.toThrow(/endedAt .* with status null/);
      await expect(fx.store.commit({ spans: [{ op: 'insert', span: generation({ status: 'ok' }) }] })).rejects.toThrow(
        /endedAt null with status ok/,
      );
      expect((await fx.store.getById(root.workflow.id))?.status).toBe('idle');
      expect(await spansOf()).toEqual([open]);
    });
  });

  describe('interruptOpenSpans', () => {
    it('closes only the open spans of that workflow, as interrupted, never before they started', async () => {
      const other = newWorkflow({ tenantId: 'acme' });
      await fx.store.create(other);
      const agent = orchestrator();
      const late = generation({ startedAt: T0 + 500 });
      const done = generation({ endedAt: T0 + 3, status: 'ok' });
      const elsewhere = orchestrator(other);
      await fx.store.commit({
        spans: [agent, late, done, elsewhere].map((s) => ({ op: 'insert' as const, span: s })),
      });

      expect(await traces.interruptOpenSpans(root.workflow.id, T0 + 100)).toBe(2);
      expect(await spansOf()).toEqual([
        { ...agent, endedAt: T0 + 100, status: 'interrupted' },
        { ...late, endedAt: T0 + 500, status: 'interrupted' },
        done,
      ]);
      expect(await spansOf(other.workflow.traceId)).toEqual([elsewhere]);
      expect(await traces.interruptOpenSpans(root.workflow.id, T0 + 200)).toBe(0);
    });
  });

  describe('trace', () => {
    it('holds the spans of the root and its child workflows; active until the ROOT is terminal', async () => {
      const child = newWorkflow({ parent: root.workflow, parentNodeId: root.nodes[1]!.id, name: 'sub' });
      await fx.store.create(child);
      const rootSpan = orchestrator();
      const childSpan = span(
        'agent_span',
        { agent_name: 'sub', model: 'sim/haiku' },
        { parentId: rootSpan.spanId },
        child,
      );
      await fx.store.commit({
        spans: [
          { op: 'insert', span: rootSpan },
          { op: 'insert', span: childSpan },
        ],
      });
      await fx.store.commit({ workflows: [{ id: child.workflow.id, status: 'completed', endedAt: T0 + 50 }] });

      const active = await traces.trace('acme', root.workflow.traceId);
      expect(active).toEqual({
        traceId: root.workflow.traceId,
        workflowId: root.workflow.id,
        workflowName: 'review-pr',
        groupId: 'session-1',
        status: 'active',
        startedAt: root.workflow.createdAt,
        endedAt: null,
        spans: [rootSpan, childSpan],
      });

      await fx.store.commit({ workflows: [{ id: root.workflow.id, status: 'failed', endedAt: T0 + 60 }] });
      const completed = await traces.trace('acme', root.workflow.traceId);
      expect(completed).toMatchObject({ status: 'completed', endedAt: T0 + 60 });
    });

    it('is tenant-scoped: another tenant or an unknown id reads as undefined', async () => {
      await fx.store.commit({ spans: [{ op: 'insert', span: orchestrator() }] });
      expect(await traces.trace('globex', root.workflow.traceId)).toBeUndefined();
      expect(await traces.trace('acme', 'trace_missing')).toBeUndefined();
    });
  });

  describe('traces', () => {
    async function seed(): Promise<NewWorkflow[]> {
      const made: NewWorkflow[] = [root];
      for (let i = 1; i < 5; i++) {
        const w = newWorkflow({ tenantId: 'acme', correlationId: i % 2 === 0 ? 'session-1' : 'session-2' });
        w.workflow.createdAt = T0 + i * 1000;
        await fx.store.create(w);
        made.push(w);
      }
      await fx.store.create(newWorkflow({ tenantId: 'globex', correlationId: 'session-1' }));
      await fx.store.commit({
        spans: [orchestrator(made[1]), orchestrator(made[1]), orchestrator(made[2])].map((s) => ({
          op: 'insert' as const,
          span: s,
        })),
        workflows: [{ id: made[3]!.workflow.id, status: 'completed', endedAt: T0 + 3500 }],
      });
      return made;
    }

    it('lists root workflows newest first, tenant-scoped, with span counts, across pages', async () => {
      const made = await seed();
      const child = newWorkflow({ parent: made[1]!.workflow, name: 'sub' });
      await fx.store.create(child);

      const first = await traces.traces('acme', {}, null, 3);
      expect(first.items.map((t) => t.workflowId)).toEqual([4, 3, 2].map((i) => made[i]!.workflow.id));
      expect(first.items[1]).toEqual({
        traceId: made[3]!.workflow.traceId,
        workflowId: made[3]!.workflow.id,
        workflowName: 'review-pr',
        groupId: 'session-2',
        status: 'completed',
        startedAt: T0 + 3000,
        endedAt: T0 + 3500,
        spanCount: 0,
      });
      expect(first.items[2]?.spanCount).toBe(1);
      const second = await traces.traces('acme', {}, first.nextCursor, 3);
      expect(second.items.map((t) => [t.workflowId, t.spanCount])).toEqual([
        [made[1]!.workflow.id, 2],
        [root.workflow.id, 0],
      ]);
      expect(second.nextCursor).toBeNull();
    });

    it('filters by workflow (root or child), group, status and time range', async () => {
      const made = await seed();
      const child = newWorkflow({ parent: made[2]!.workflow, name: 'sub' });
      await fx.store.create(child);
      const ids = async (filter: Parameters<TraceStore['traces']>[1]) =>
        (await traces.traces('acme', filter, null, 100)).items.map((t) =>
          made.findIndex((m) => m.workflow.id === t.workflowId),
        );

      expect(await ids({ workflowId: child.workflow.id })).toEqual([2]);
      expect(await ids({ workflowId: made[4]!.workflow.id })).toEqual([4]);
      expect(await ids({ workflowId: 'wf_missing' })).toEqual([]);
      expect(await ids({ groupId: 'session-1' })).toEqual([4, 2, 0]);
      expect(await ids({ status: 'completed' })).toEqual([3]);
      expect(await ids({ status: 'active' })).toEqual([4, 2, 1, 0]);
      expect(await ids({ from: T0 + 2000, to: T0 + 4000 })).toEqual([3, 2]);
      expect(await ids({ groupId: 'session-1', status: 'active', from: T0 + 1 })).toEqual([4, 2]);
      expect((await traces.traces('globex', { groupId: 'session-1' }, null, 10)).items).toHaveLength(1);
    });

    it('rejects a malformed cursor or limit', async () => {
      await expect(traces.traces('acme', {}, 'not a cursor!', 10)).rejects.toBeInstanceOf(ValidationError);
      await expect(traces.traces('acme', {}, null, 0)).rejects.toBeInstanceOf(ValidationError);
    });
  });
});
