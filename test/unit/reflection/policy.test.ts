import { describe, expect, it } from 'vitest';
import { AppError, type ErrorCode, ProviderError, type ProviderErrorKind } from '../../../src/domain/errors.js';
import type { ReflectionEntry } from '../../../src/domain/reflection.js';
import {
  applyRevisions,
  decide,
  isPromptReflectable,
  isReflectable,
  parseReflectionAdvice,
  replayRevisions,
  resolutionOf,
} from '../../../src/reflection/policy.js';

const err = (code: ErrorCode, message = 'boom') => new AppError(code, message);

describe('isReflectable', () => {
  it.each<ErrorCode>([
    'NODE_TIMEOUT',
    'MAX_TURNS_EXCEEDED',
    'INVALID_RESPONSE_FORMAT',
    'VALIDATION_FAILED',
    'UNKNOWN_TOOL',
    'CHILD_WORKFLOW_FAILED',
  ])('reflects on %s', (code) => {
    expect(isReflectable(err(code))).toBe(true);
  });

  it.each<ErrorCode>([
    'CANCELLED',
    'SHUTTING_DOWN',
    'LLM_CALL_LIMIT_EXCEEDED',
    'LIMIT_EXCEEDED',
    'WORKFLOW_TIMEOUT',
    'MISSING_CONTEXT',
    'UNKNOWN_MODEL',
    'PROVIDER_NOT_CONFIGURED',
    'INTERNAL',
    'VALIDATION_ERROR',
    'NOT_FOUND',
  ])('does not reflect on %s', (code) => {
    expect(isReflectable(err(code))).toBe(false);
  });

  // Fail-fast classes can never be fixed by the model; transport classes reach a node only after the
  // transport retries gave up, and must never consume reflection attempts (docs/design.md#transport-retries).
  it.each<ProviderErrorKind>([
    'authentication',
    'permission',
    'quota',
    'invalid_request',
    'rate_limit',
    'overloaded',
    'timeout',
    'connection',
    'server',
    'bad_response',
  ])('does not reflect on a %s provider error', (kind) => {
    expect(isReflectable(new ProviderError(kind, 'provider said no', { httpStatus: 500 }))).toBe(false);
  });

  it('reads the code of a stored ErrorInfo too', () => {
    expect(isReflectable({ code: 'VALIDATION_FAILED', message: 'x' })).toBe(true);
    expect(isReflectable({ code: 'LLM_QUOTA', message: 'x' })).toBe(false);
    expect(isReflectable({ code: 'SOMETHING_NEW', message: 'x' })).toBe(false);
    expect(isReflectable({ code: 'toString', message: 'x' })).toBe(false);
    // Only a string is a code: an array holding one is not read as that code.
    expect(isReflectable({ code: ['VALIDATION_FAILED'], message: 'x' })).toBe(false);
  });

  it('does not reflect on bugs and foreign values', () => {
    expect(isReflectable(new TypeError('undefined is not a function'))).toBe(false);
    expect(isReflectable(Object.assign(new Error('disk'), { code: 'SQLITE_FULL' }))).toBe(false);
    expect(isReflectable(new DOMException('aborted', 'AbortError'))).toBe(false);
    expect(isReflectable(undefined)).toBe(false);
    expect(isReflectable(null)).toBe(false);
    expect(isReflectable('VALIDATION_FAILED')).toBe(false);
  });
});

describe('isPromptReflectable', () => {
  it('re-asks only on an unusable answer', () => {
    expect(isPromptReflectable(err('INVALID_RESPONSE_FORMAT'))).toBe(true);
    expect(isPromptReflectable(err('VALIDATION_FAILED'))).toBe(true);
    expect(isPromptReflectable({ code: 'VALIDATION_FAILED', message: 'x' })).toBe(true);
    for (const code of ['NODE_TIMEOUT', 'MAX_TURNS_EXCEEDED', 'CANCELLED', 'LLM_TIMEOUT'] as const) {
      expect(isPromptReflectable(err(code))).toBe(false);
    }
    expect(isPromptReflectable(new ProviderError('invalid_request', 'bad'))).toBe(false);
    expect(isPromptReflectable(new Error('VALIDATION_FAILED'))).toBe(false);
  });
});

describe('decide', () => {
  const retry = { shouldRetry: true, reason: 'fixable' };
  const stop = { shouldRetry: false, reason: 'hopeless' };

  // attempt × advice → decision, success (the reflection produced a usable decision)
  it.each([
    [1, retry, 'retry', true],
    [2, retry, 'retry', true],
    [3, retry, 'abort', true],
    [1, stop, 'abort', true],
    [2, stop, 'abort', true],
    [3, stop, 'abort', true],
    [1, undefined, 'retry', false],
    [2, undefined, 'retry', false],
    [3, undefined, 'abort', false],
  ] as const)('attempt %i of 3 with advice %o → %s (success %s)', (attempt, advice, decision, success) => {
    const result = decide({ advice, attempt, maxAttempts: 3 });
    expect(result.decision).toBe(decision);
    expect(result.success).toBe(success);
    expect(result.reason.length).toBeGreaterThan(0);
  });

  it('explains its reason', () => {
    expect(decide({ advice: retry, attempt: 1, maxAttempts: 3 }).reason).toBe('fixable');
    expect(decide({ advice: stop, attempt: 1, maxAttempts: 3 }).reason).toBe('hopeless');
    expect(decide({ attempt: 1, maxAttempts: 3 }).reason).toContain('fallback');
    expect(decide({ advice: retry, attempt: 3, maxAttempts: 3 }).reason).toBe(
      'attempt 3 of 3 failed and no attempts are left: fixable',
    );
  });

  it('never retries when maxAttempts is 1', () => {
    expect(decide({ advice: retry, attempt: 1, maxAttempts: 1 }).decision).toBe('abort');
    expect(decide({ attempt: 1, maxAttempts: 1 }).decision).toBe('abort');
  });

  it('skips an optional node instead of aborting', () => {
    expect(decide({ advice: stop, attempt: 1, maxAttempts: 3, optional: true }).decision).toBe('skip');
    expect(decide({ attempt: 3, maxAttempts: 3, optional: true }).decision).toBe('skip');
    expect(decide({ advice: retry, attempt: 1, maxAttempts: 3, optional: true }).decision).toBe('retry');
  });
});

describe('applyRevisions', () => {
  it('shallow-merges revisedPromptData over data and replaces the system prompt', () => {
    const data = { code: 'x', nested: { a: 1, b: 2 } };
    const advice = {
      shouldRetry: true,
      reason: 'r',
      revisedPromptData: { nested: { a: 9 }, hint: 'new key' },
      revisedSystemPrompt: 'Be precise.',
    };
    const applied = applyRevisions({ data, system: 'old' }, advice);
    // Shallow: `nested` is replaced as a whole, not merged key by key.
    expect(applied.data).toEqual({ code: 'x', nested: { a: 9 }, hint: 'new key' });
    expect(applied.system).toBe('Be precise.');
    expect(applied.revised).toEqual({ promptData: true, systemPrompt: true });
    expect(applied.revisions).toEqual({ promptData: advice.revisedPromptData, systemPrompt: 'Be precise.' });
    expect(data).toEqual({ code: 'x', nested: { a: 1, b: 2 } });
  });

  it('creates data when the prompt had none, and a system prompt when the agent had none', () => {
    const applied = applyRevisions(
      {},
      { shouldRetry: true, reason: 'r', revisedPromptData: { k: 1 }, revisedSystemPrompt: 'S' },
    );
    expect(applied.data).toEqual({ k: 1 });
    expect(applied.system).toBe('S');
  });

  it('changes nothing without advice or without revisions', () => {
    const input = { data: { a: 1 }, system: 'sys' };
    for (const advice of [
      undefined,
      { shouldRetry: true, reason: 'r' },
      { shouldRetry: true, reason: 'r', revisedPromptData: {}, revisedSystemPrompt: '  ' },
      { shouldRetry: true, reason: 'r', revisedSystemPrompt: 'sys' },
    ]) {
      const applied = applyRevisions(input, advice);
      expect(applied.data).toBe(input.data);
      expect(applied.system).toBe('sys');
      expect(applied.revised).toEqual({ promptData: false, systemPrompt: false });
      expect(applied.revisions).toBeUndefined();
    }
  });

  it('keeps a model-supplied "__proto__" key as data, not as a prototype', () => {
    const advice = parseReflectionAdvice(
      '{"shouldRetry":true,"reason":"r","revisedPromptData":{"__proto__":{"polluted":1}}}',
    );
    const applied = applyRevisions({ data: { a: 1 } }, advice);
    expect(Object.getPrototypeOf(applied.data)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('resolutionOf and replayRevisions', () => {
  const advice = { shouldRetry: true, reason: 'r', revisedPromptData: { hint: 'h' } };

  it('records the flags and content only for a retry that applied revisions', () => {
    const applied = applyRevisions({ data: { a: 1 } }, advice);
    expect(resolutionOf('retry', applied)).toEqual({
      decision: 'retry',
      revisedPromptData: true,
      revisions: { promptData: { hint: 'h' } },
    });
    expect(resolutionOf('abort', applied)).toEqual({ decision: 'abort' });
    expect(resolutionOf('retry')).toEqual({ decision: 'retry' });
    expect(resolutionOf('retry', applyRevisions({}, { shouldRetry: true, reason: 'r' }))).toEqual({
      decision: 'retry',
    });
  });

  it('re-applies the stored revisions of one node in order', () => {
    const entry = (nodeId: string, resolution: ReflectionEntry['resolution']): ReflectionEntry => ({
      id: `rf_${nodeId}`,
      workflowId: 'wf_1',
      tenantId: 't',
      nodeId,
      nodeName: nodeId,
      attempt: 1,
      timestamp: 0,
      level: 'workflow',
      reason: 'r',
      error: { code: 'VALIDATION_FAILED', message: 'm' },
      resolution,
      success: null,
    });
    const entries = [
      entry('n1', { decision: 'retry', revisedPromptData: true, revisions: { promptData: { a: 2, b: 1 } } }),
      entry('n2', { decision: 'retry', revisedSystemPrompt: true, revisions: { systemPrompt: 'other node' } }),
      entry('n1', {
        decision: 'retry',
        revisedSystemPrompt: true,
        revisions: { systemPrompt: 'S2', promptData: { b: 3 } },
      }),
      entry('n1', { decision: 'abort' }),
    ];
    expect(replayRevisions({ data: { a: 1 }, system: 'S' }, entries, 'n1')).toEqual({
      data: { a: 2, b: 3 },
      system: 'S2',
    });
    expect(replayRevisions({ data: { a: 1 }, system: 'S' }, entries, 'n3')).toEqual({ data: { a: 1 }, system: 'S' });
    // Only retries ran with revisions: a retry that stored none, or a skip carrying some, changes nothing.
    const unrevised = [
      entry('n1', { decision: 'retry' }),
      entry('n1', { decision: 'skip', revisions: { systemPrompt: 'never applied' } }),
    ];
    expect(replayRevisions({ data: { a: 1 }, system: 'S' }, unrevised, 'n1')).toStrictEqual({
      data: { a: 1 },
      system: 'S',
    });
  });

  it('records only the revision that was applied when the advice also offered one that was not', () => {
    const input = { data: { a: 1 }, system: 'old' };
    const onlySystem = applyRevisions(input, { ...advice, revisedPromptData: {}, revisedSystemPrompt: 'new' });
    expect(resolutionOf('retry', onlySystem)).toStrictEqual({
      decision: 'retry',
      revisedSystemPrompt: true,
      revisions: { systemPrompt: 'new' },
    });
    const onlyData = applyRevisions(input, { ...advice, revisedPromptData: { b: 2 }, revisedSystemPrompt: 'old' });
    expect(resolutionOf('retry', onlyData)).toStrictEqual({
      decision: 'retry',
      revisedPromptData: true,
      revisions: { promptData: { b: 2 } },
    });
  });
});
