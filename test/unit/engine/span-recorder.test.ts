import { describe, expect, it } from 'vitest';
import type { GenerationUsage, SpanFieldsByType } from '../../../src/domain/spans.js';
import { SpanRecorder } from '../../../src/engine/run/span-recorder.js';
import { createSqliteTraceStore } from '../../../src/store/sqlite/spans.repo.js';
import { newWorkflow, openMemoryStore } from '../../support/store-fixtures.js';

const generation = (
  fields: Partial<SpanFieldsByType['generation_span']> = {},
): SpanFieldsByType['generation_span'] => ({
  model: 'anthropic/claude-haiku',
  tokens_in: 0,
  tokens_out: 0,
  latency_ms: 0,
  cache_hit: false,
  cache_key: null,
  cost_usd: 0,
  ...fields,
});

/** Folds usage the slow way, from the spans themselves, for comparison. */
function foldUsage(
  spans: ReadonlyArray<{ type: string; fields: unknown; workflowId: string }>,
  workflowId: string,
): GenerationUsage {
  const usage = { workflowId, calls: 0, tokensIn: 0, tokensOut: 0, costUsd: 0, simulatedCostUsd: 0 };
  for (const span of spans) {
    if (span.type !== 'generation_span') continue;
    const f = span.fields as SpanFieldsByType['generation_span'];
    if (!f.cache_hit) usage.calls++;
    usage.tokensIn += f.tokens_in;
    usage.tokensOut += f.tokens_out;
    if (f.simulated === true || f.model.startsWith('sim/')) usage.simulatedCostUsd += f.cost_usd;
    else usage.costUsd += f.cost_usd;
  }
  return usage;
}

describe('SpanRecorder usage', () => {
  it('counts what the generation spans add, across drains, equal to folding the stored spans', async () => {
    const fx = openMemoryStore();
    const traces = createSqliteTraceStore(fx.db, fx.committer);
    const created = newWorkflow({ tenantId: 'acme' });
    await fx.store.create(created);
    const { workflow } = created;
    let now = 1_000;
    const recorder = new SpanRecorder(
      { traceId: workflow.traceId, workflowId: workflow.id, tenantId: 'acme' },
      () => now,
    );
    const commit = async () => {
      const usage = recorder.drainUsage();
      await fx.store.commit({ spans: recorder.drain(), ...(usage ? { usage: [usage] } : {}) });
    };

    // A call that starts in one commit and ends in the next: counted once, tokens at its end.
    const open = recorder.start('generation_span', null, null, generation());
    recorder.start('agent_span', null, null, { agent_name: 'writer' });
    await commit();
    now = 1_200;
    recorder.end(open, 'ok', { tokens_in: 120, tokens_out: 30, cost_usd: 0.002 });
    // A second end changes nothing (the store ignores it too).
    recorder.end(open, 'ok', { tokens_in: 999 });
    // A cache hit: no call, no tokens; a simulated call: its money apart.
    recorder.record('generation_span', null, null, generation({ cache_hit: true, cache_key: 'k' }));
    const sim = recorder.start('generation_span', null, null, generation({ model: 'sim/haiku', simulated: true }));
    recorder.end(sim, 'ok', { tokens_in: 10, tokens_out: 5, cost_usd: 0.5 });
    // A call that failed: counted as a call, nothing spent.
    const failed = recorder.start('generation_span', null, null, generation());
    recorder.end(failed, 'error');
    await commit();
    expect(recorder.drainUsage()).toBeUndefined();

    const [usage] = await traces.generationUsage('acme', workflow.traceId);
    const spans = (await traces.trace('acme', workflow.traceId))?.spans ?? [];
    expect(usage).toEqual(foldUsage(spans, workflow.id));
    expect(usage).toEqual({
      workflowId: workflow.id,
      calls: 3,
      tokensIn: 130,
      tokensOut: 35,
      costUsd: 0.002,
      simulatedCostUsd: 0.5,
    });
  });
});
