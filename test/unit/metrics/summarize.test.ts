import { describe, expect, it } from 'vitest';
import { EfficiencyRecordSchema } from '../../../src/domain/metrics.js';
import { summarizeRun } from '../../../src/metrics/efficiency.js';
import { isFormatError, reflectionRetryReason, tierOfModel } from '../../../src/metrics/run-facts.js';
import { p, par, RunBuilder, seq } from './fixtures.js';

const schema = { type: 'object' };

describe('summarizeRun: metrics', () => {
  it('derives a whole record (worked example)', () => {
    const b = new RunBuilder(seq('main', p('plan', { responseFormat: schema }), p('write')), {
      task: { type: 'code_review', signals: ['feature'] }, // +1 → moderate
      agents: { a: { model: 'sim/sonnet', tools: ['search'] } },
      seconds: 332,
    })
      .node('plan', { attempts: 2 })
      .step('plan')
      .call('plan', 'sim/haiku', [1000, 200], 0.002)
      .event('agentPromptStart', 'plan', { model: 'sim/sonnet', attempt: 2 })
      .event('retry', 'plan', { reason: 'rate_limit', attempt: 1, code: 'LLM_RATE_LIMIT' })
      .event('agentPromptEnd', 'plan', {
        model: 'sim/sonnet',
        attempt: 2,
        requests: 2,
        tokenUsage: { inputTokens: 3000, outputTokens: 500 },
        costUsd: 0.01,
      })
      .event('cacheHit', 'write', { key: 'a:k', model: 'sim/sonnet', tokenUsage: { inputTokens: 9, outputTokens: 9 } })
      .event('toolInvocation', 'write', { toolName: 'search', isError: false })
      .event('toolInvocation', 'write', { toolName: 'search', isError: true })
      .event('agentPromptStart', 'write', { model: 'anthropic/claude-opus-4-1', purpose: 'reflection', attempt: 1 })
      .event('agentPromptEnd', 'write', {
        model: 'anthropic/claude-opus-4-1',
        purpose: 'reflection',
        attempt: 1,
        requests: 1,
        tokenUsage: { inputTokens: 10, outputTokens: 5 },
        costUsd: 0.5,
      })
      .reflection('plan', { error: { code: 'VALIDATION_FAILED', message: 'x' }, success: true });
    const record = summarizeRun(b.input());
    expect(EfficiencyRecordSchema.parse(record)).toEqual(record);
    expect(record).toMatchObject({
      task_id: 'wf_test',
      correlation_id: 'session-1',
      task_type: 'code_review',
      complexity: 'moderate',
      started_at: '2026-01-06T10:00:00.000Z',
      completed_at: '2026-01-06T10:05:32.000Z',
      outcome: 'success',
      outcome_reason: 'tests_passed_after_fix',
    });
    expect(record.metrics).toEqual({
      wall_time_seconds: 332,
      agents_spawned: 3, // plan's 2 attempts + write's 1, each sent a request
      total_agent_calls: 3, // 3 agentPromptStart; the cache hit is not a call
      provider_requests: 4, // the sonnet call was sent twice (one transport retry)
      retry_count: 2, // 1 transport + 1 reflection
      retry_reasons: ['rate_limit', 'test_failure'],
      recovery_rate: 1,
      model_usage: {
        haiku: { calls: 1, est_tokens: 1200 },
        sonnet: { calls: 1, est_tokens: 3500 },
        opus: { calls: 1, est_tokens: 15 },
        other: { calls: 0, est_tokens: 0 },
      },
      by_model: {
        'sim/haiku': { calls: 1, requests: 1, tokens_in: 1000, tokens_out: 200, cost_usd: 0.002 },
        'sim/sonnet': { calls: 1, requests: 2, tokens_in: 3000, tokens_out: 500, cost_usd: 0.01 },
        'anthropic/claude-opus-4-1': { calls: 1, requests: 1, tokens_in: 10, tokens_out: 5, cost_usd: 0.5 },
      },
      cache_hits: 1,
    });
    // moderate {600, 4, 1}: 0.5·1 + 0.3·1 + 0.2·(1 − 2/4) = 0.9
    expect(record.efficiency_score).toBe(0.9);
    expect(record.quality_pillars).toEqual({
      tool_selection_correct: true,
      tool_reliability_rate: 0.5,
      memory_retrieval_relevant: null,
      goal_adherence: 1,
    });
    expect(record.efficiency_factors).toEqual(['cached_result', 'multiple_retries']);
  });

  it('recovery_rate is null without retries, and pillars null with nothing to measure', () => {
    const b = new RunBuilder(p('a')).node('a', { attempts: 0, status: 'idle' });
    const record = summarizeRun(b.input());
    expect(record.metrics.retry_count).toBe(0);
    expect(record.metrics.retry_reasons).toEqual([]);
    expect(record.metrics.recovery_rate).toBeNull();
    expect(record.quality_pillars).toEqual({
      tool_selection_correct: null,
      tool_reliability_rate: null,
      memory_retrieval_relevant: null,
      goal_adherence: null,
    });
  });

  it('a transport retry succeeds when its call recovered (the whole chain); a reflection retry when its entry says so', () => {
    const b = new RunBuilder(seq('main', p('a'), p('b')), {
      status: 'failed',
      error: { code: 'LLM_TIMEOUT', message: 'x' },
    })
      .event('agentPromptStart', 'a', { model: 'sim/haiku' })
      .event('retry', 'a', { reason: 'timeout' })
      .event('retry', 'a', { reason: 'timeout' })
      .event('agentPromptEnd', 'a', { model: 'sim/haiku', tokenUsage: { inputTokens: 1, outputTokens: 1 } })
      .event('agentPromptStart', 'b', { model: 'sim/haiku' })
      .event('retry', 'b', { reason: 'rate_limit' })
      .event('error', 'b', { code: 'LLM_TIMEOUT' })
      .reflection('b', { error: { code: 'NODE_TIMEOUT', message: 'x' }, success: false })
      .reflection('b', { error: { code: 'MISSING_CONTEXT', message: 'x' }, resolution: { decision: 'abort' } });
    const { metrics } = summarizeRun(b.input());
    // a: a timeout → timeout → ok chain recovered, so both of its retries did (a
    // 429 → 503 → ok chain counted 0.5); b: failed; the reflection: failed.
    expect(metrics.retry_count).toBe(4);
    expect(metrics.recovery_rate).toBe(0.5);
    expect(metrics.retry_reasons).toEqual(['timeout', 'rate_limit']);
  });

  it('maps reflection error codes to the closed retry vocabulary', () => {
    expect(reflectionRetryReason('INVALID_RESPONSE_FORMAT')).toBe('test_failure');
    expect(reflectionRetryReason('VALIDATION_FAILED')).toBe('test_failure');
    expect(reflectionRetryReason('MAX_TURNS_EXCEEDED')).toBe('test_failure');
    expect(reflectionRetryReason('NODE_TIMEOUT')).toBe('timeout');
    expect(reflectionRetryReason('LLM_OVERLOADED')).toBe('rate_limit');
    expect(reflectionRetryReason('UNKNOWN_TOOL')).toBe('dependency_conflict');
  });

  it('tiers models by name', () => {
    expect(
      ['sim/haiku', 'anthropic/claude-3-5-haiku-latest', 'sim/opus', 'openai/gpt-4o', 'x'].map(tierOfModel),
    ).toEqual(['haiku', 'haiku', 'opus', 'other', 'other']);
    // The tier is read from the model's name after the provider, in any case, and a bare name counts.
    expect(['haiku-proxy/claude-opus', 'anthropic/Claude-SONNET-5', 'sonnet', 'opus/gpt-4o'].map(tierOfModel)).toEqual([
      'opus',
      'sonnet',
      'sonnet',
      'other',
    ]);
  });

  it('a run without a task is of type unspecified', () => {
    expect(summarizeRun(new RunBuilder(p('a')).input()).task_type).toBe('unspecified');
  });

  it('a format error is a code re-asked on, nothing else', () => {
    expect(['INVALID_RESPONSE_FORMAT', 'VALIDATION_FAILED', 'NODE_TIMEOUT', 'INTERNAL'].map(isFormatError)).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });
});

describe('summarizeRun: efficiency factors', () => {
  const factors = (b: RunBuilder) => summarizeRun(b.input()).efficiency_factors;

  it('used_haiku_for_simple, first_try_success, spec_driven', () => {
    const b = new RunBuilder(p('a', { responseFormat: schema }), { task: { type: 't', complexity: 'simple' } }).call(
      'a',
      'sim/haiku',
    );
    expect(factors(b)).toEqual(['used_haiku_for_simple', 'first_try_success', 'spec_driven']);
  });

  it('used_opus_for_simple; no haiku factor once another tier is used', () => {
    const b = new RunBuilder(seq('main', p('a'), p('b')), { task: { type: 't', complexity: 'trivial' } })
      .call('a', 'sim/haiku')
      .call('b', 'sim/opus');
    expect(factors(b)).toEqual(['first_try_success', 'used_opus_for_simple']);
    const moderate = new RunBuilder(p('a'), { task: { type: 't', complexity: 'moderate' } }).call('a', 'sim/opus');
    expect(factors(moderate)).toEqual(['first_try_success']);
  });

  it('parallel_execution when two prompts of a parallel node overlap, else sequential_when_parallel_possible', () => {
    const overlapping = new RunBuilder(par('fan', p('a'), p('b')), { task: { type: 't', complexity: 'complex' } })
      .event('stepStart', 'a', { type: 'prompt' })
      .event('stepStart', 'b', { type: 'prompt' })
      .event('stepEnd', 'a')
      .event('stepEnd', 'b');
    expect(factors(overlapping)).toEqual(['parallel_execution', 'first_try_success']);
    const oneByOne = new RunBuilder(par('fan', p('a'), p('b')), { task: { type: 't', complexity: 'complex' } })
      .step('a')
      .step('b');
    expect(factors(oneByOne)).toEqual(['first_try_success', 'sequential_when_parallel_possible']);
  });

  it('no sequential_when_parallel_possible when the allocation itself runs the task one step at a time', () => {
    // A simple task's allocation says parallel: false: parallel was not possible, so it is no fault.
    const routed = new RunBuilder(par('fan', p('a'), p('b')), { task: { type: 't', complexity: 'simple' } })
      .step('a')
      .step('b');
    const factorsOf = (parallelAllowed: boolean) =>
      summarizeRun({ ...routed.input(), parallelAllowed }).efficiency_factors;
    expect(factorsOf(false)).not.toContain('sequential_when_parallel_possible');
    expect(factorsOf(true)).toContain('sequential_when_parallel_possible');
  });

  it('missing_context and unclear_requirements; no first_try_success on failure', () => {
    const b = new RunBuilder(seq('main', p('a', { responseFormat: schema }), p('b')), {
      status: 'failed',
      error: { code: 'MISSING_CONTEXT', message: 'x' },
      task: { type: 't', complexity: 'complex' },
    })
      .event('invalidResponse', 'a', { code: 'VALIDATION_FAILED' })
      .event('error', 'a', { code: 'VALIDATION_FAILED' });
    expect(factors(b)).toEqual(['missing_context', 'unclear_requirements']);
  });

  it('tool_selection_correct is false when a tool outside the agent’s list was invoked', () => {
    const b = new RunBuilder(p('a'), { agents: { a: { tools: ['search'] } } })
      .event('toolInvocation', 'a', { toolName: 'search', isError: false })
      .event('toolInvocation', 'a', { toolName: 'rm', isError: true });
    expect(summarizeRun(b.input()).quality_pillars).toMatchObject({
      tool_selection_correct: false,
      tool_reliability_rate: 0.5,
    });
  });

  it('goal_adherence = completed prompts / prompts that ran', () => {
    const b = new RunBuilder(par('fan', p('a'), p('b', { optional: true }), p('c', { optional: true }), p('d')))
      .node('b', { status: 'failed' })
      .node('d', { attempts: 0, status: 'idle' });
    expect(summarizeRun(b.input()).quality_pillars.goal_adherence).toBe(0.6667);
  });
});
