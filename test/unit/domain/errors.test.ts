import { describe, expect, it } from 'vitest';
import {
  AppError,
  classifyHttpFailure,
  ERROR_CODES,
  type ErrorCode,
  fromErrorInfo,
  meaningOf,
  NotFoundError,
  ProviderError,
  type ProviderErrorKind,
  toErrorInfo,
  ValidationError,
} from '../../../src/domain/errors.js';
import { OUTCOME_REASONS, RETRY_REASONS } from '../../../src/domain/metrics.js';
import { REDACTED } from '../../../src/domain/redact.js';

/**
 * One table says what a code means (docs/design.md#architecture-and-floors): every code has a meaning that holds
 * together, and
 * every error takes its status and retry class from it, not from where it was thrown.
 */
const CODES = Object.keys(ERROR_CODES) as ErrorCode[];

describe('ERROR_CODES', () => {
  it.each(CODES)('%s: a coherent meaning', (code) => {
    const meaning = ERROR_CODES[code];
    expect(Number.isInteger(meaning.status) && meaning.status >= 400 && meaning.status < 600).toBe(true);
    expect(RETRY_REASONS).toContain(meaning.retryReason);
    const outcome = meaning.outcome === 'timeout' ? 'timeout_no_progress' : meaning.outcome;
    expect(OUTCOME_REASONS).toContain(outcome);
    // The transport layer retries provider classes only, and reflection never spends attempts on them.
    if (meaning.retryable) {
      expect(code.startsWith('LLM_')).toBe(true);
      expect(meaning.reflectable).toBe(false);
      expect(['rate_limit', 'timeout']).toContain(meaning.retryReason);
    }
    // A re-ask is a reflection in the conversation: only for what reflection can fix.
    if ('reAsk' in meaning) expect(meaning.reflectable).toBe(true);
    const err = new AppError(code, 'x');
    expect(err.statusCode).toBe(meaning.status);
    expect(err.retryable).toBe(meaning.retryable);
  });

  it('every provider class maps to a code, and takes its retry class from the table', () => {
    const kinds: ProviderErrorKind[] = [
      'rate_limit',
      'overloaded',
      'timeout',
      'connection',
      'server',
      'bad_response',
      'authentication',
      'permission',
      'quota',
      'invalid_request',
    ];
    for (const kind of kinds) {
      const err = new ProviderError(kind, 'x');
      expect(ERROR_CODES[err.code]).toBeDefined();
      expect(err.retryable).toBe(ERROR_CODES[err.code].retryable);
    }
    expect(new ProviderError('authentication', 'x').retryable).toBe(false);
    expect(new ProviderError('overloaded', 'x').retryable).toBe(true);
  });

  it('an unknown code (a record from another build) reads as INTERNAL', () => {
    expect(meaningOf('NO_SUCH_CODE')).toBe(ERROR_CODES.INTERNAL);
    expect(meaningOf('constructor')).toBe(ERROR_CODES.INTERNAL);
  });
});

/**
 * The table itself, code by code: a retry flag costs paid calls, a reflect flag paid reflection
 * calls, the retry reason and the outcome are what the efficiency record and the reward read. A
 * change to a meaning is a decision made here too, not a side effect of editing a helper.
 * [status, flags (retry, reflect, reAsk), retry reason, outcome]
 */
const MEANINGS: Record<ErrorCode, [number, string, string, string]> = {
  VALIDATION_ERROR: [400, '', 'test_failure', 'error_unrecoverable'],
  BAD_REQUEST: [400, '', 'test_failure', 'error_unrecoverable'],
  INVALID_JSON: [400, '', 'test_failure', 'error_unrecoverable'],
  UNAUTHORIZED: [401, '', 'test_failure', 'error_unrecoverable'],
  FORBIDDEN: [403, '', 'test_failure', 'error_unrecoverable'],
  NOT_FOUND: [404, '', 'test_failure', 'error_unrecoverable'],
  METHOD_NOT_ALLOWED: [405, '', 'test_failure', 'error_unrecoverable'],
  NOT_ACCEPTABLE: [406, '', 'test_failure', 'error_unrecoverable'],
  REQUEST_TIMEOUT: [408, '', 'test_failure', 'error_unrecoverable'],
  CONFLICT: [409, '', 'test_failure', 'error_unrecoverable'],
  NOT_TERMINAL: [409, '', 'test_failure', 'error_unrecoverable'],
  WORKFLOW_TERMINAL: [409, '', 'test_failure', 'error_unrecoverable'],
  PAYLOAD_TOO_LARGE: [413, '', 'test_failure', 'error_unrecoverable'],
  UNSUPPORTED_MEDIA_TYPE: [415, '', 'test_failure', 'error_unrecoverable'],
  IDEMPOTENCY_KEY_REUSED: [422, '', 'test_failure', 'error_unrecoverable'],
  UNPROCESSABLE_ENTITY: [422, '', 'test_failure', 'error_unrecoverable'],
  RATE_LIMITED: [429, '', 'test_failure', 'error_unrecoverable'],
  TOO_MANY_STREAMS: [429, '', 'test_failure', 'error_unrecoverable'],
  HEADERS_TOO_LARGE: [431, '', 'test_failure', 'error_unrecoverable'],
  INTERNAL: [500, '', 'test_failure', 'error_unrecoverable'],
  SHUTTING_DOWN: [503, '', 'test_failure', 'error_unrecoverable'],
  LEASE_LOST: [503, '', 'test_failure', 'error_unrecoverable'],
  RUN_PARKED: [503, '', 'test_failure', 'error_unrecoverable'],
  SERVICE_UNAVAILABLE: [503, '', 'test_failure', 'error_unrecoverable'],
  CANCELLED: [409, '', 'test_failure', 'timeout'],
  NODE_TIMEOUT: [504, 'reflect', 'timeout', 'timeout'],
  WORKFLOW_TIMEOUT: [504, '', 'timeout', 'timeout'],
  MAX_TURNS_EXCEEDED: [500, 'reflect', 'test_failure', 'error_unrecoverable'],
  INVALID_ACTION: [500, 'reflect', 'test_failure', 'error_unrecoverable'],
  CHECKPOINT_REJECTED: [409, '', 'test_failure', 'review_blocked'],
  LLM_CALL_LIMIT_EXCEEDED: [409, '', 'test_failure', 'error_unrecoverable'],
  TENANT_BUDGET_EXCEEDED: [429, '', 'rate_limit', 'error_unrecoverable'],
  LIMIT_EXCEEDED: [409, '', 'test_failure', 'error_unrecoverable'],
  OUTPUT_TOO_LARGE: [409, '', 'test_failure', 'error_unrecoverable'],
  CONVERSATION_TOO_LARGE: [409, '', 'test_failure', 'error_unrecoverable'],
  MISSING_CONTEXT: [400, '', 'dependency_conflict', 'dependency_missing'],
  INVALID_RESPONSE_FORMAT: [500, 'reflect reAsk', 'test_failure', 'tests_failed'],
  VALIDATION_FAILED: [500, 'reflect reAsk', 'test_failure', 'tests_failed'],
  UNKNOWN_MODEL: [400, '', 'dependency_conflict', 'dependency_missing'],
  UNKNOWN_TOOL: [500, 'reflect', 'dependency_conflict', 'dependency_missing'],
  PROVIDER_NOT_CONFIGURED: [400, '', 'dependency_conflict', 'dependency_missing'],
  CHILD_WORKFLOW_FAILED: [500, 'reflect', 'test_failure', 'error_unrecoverable'],
  REVIEW_BLOCKED: [422, '', 'review_rejection', 'review_blocked'],
  LLM_RATE_LIMIT: [502, 'retry', 'rate_limit', 'error_unrecoverable'],
  LLM_OVERLOADED: [502, 'retry', 'rate_limit', 'error_unrecoverable'],
  LLM_TIMEOUT: [502, 'retry', 'timeout', 'error_unrecoverable'],
  LLM_CONNECTION: [502, 'retry', 'timeout', 'error_unrecoverable'],
  LLM_SERVER_ERROR: [502, 'retry', 'timeout', 'error_unrecoverable'],
  LLM_BAD_RESPONSE: [502, 'retry', 'timeout', 'error_unrecoverable'],
  LLM_AUTHENTICATION: [502, '', 'test_failure', 'dependency_missing'],
  LLM_PERMISSION: [502, '', 'test_failure', 'dependency_missing'],
  LLM_QUOTA: [502, '', 'rate_limit', 'dependency_missing'],
  LLM_INVALID_REQUEST: [502, '', 'test_failure', 'error_unrecoverable'],
};

describe('what each code means', () => {
  it('the table holds exactly these codes, each with exactly this meaning', () => {
    expect(CODES).toEqual(Object.keys(MEANINGS));
    for (const code of CODES) {
      const [status, flags, retryReason, outcome] = MEANINGS[code];
      const expected = {
        status,
        retryable: flags.includes('retry'),
        reflectable: flags.includes('reflect'),
        ...(flags.includes('reAsk') ? { reAsk: true } : {}),
        retryReason,
        outcome,
      };
      expect(meaningOf(code), code).toStrictEqual(expected);
    }
  });

  it('a provider failure class names its code; an oversized body is a bad response never retried', () => {
    const codes: Record<ProviderErrorKind, ErrorCode> = {
      rate_limit: 'LLM_RATE_LIMIT',
      overloaded: 'LLM_OVERLOADED',
      timeout: 'LLM_TIMEOUT',
      connection: 'LLM_CONNECTION',
      server: 'LLM_SERVER_ERROR',
      bad_response: 'LLM_BAD_RESPONSE',
      oversized_response: 'LLM_BAD_RESPONSE',
      authentication: 'LLM_AUTHENTICATION',
      permission: 'LLM_PERMISSION',
      quota: 'LLM_QUOTA',
      invalid_request: 'LLM_INVALID_REQUEST',
    };
    for (const [kind, code] of Object.entries(codes) as Array<[ProviderErrorKind, ErrorCode]>) {
      const err = new ProviderError(kind, 'x', { httpStatus: 418 });
      expect([err.code, err.kind, err.httpStatus, err.name], kind).toEqual([code, kind, 418, 'ProviderError']);
    }
    expect(new ProviderError('bad_response', 'x').retryable).toBe(true);
    expect(new ProviderError('oversized_response', 'x').retryable).toBe(false);
  });

  it('classifies an HTTP failure by status, and a 400, 402 or 429 about money as quota', () => {
    const cases: Array<[number, string, ProviderErrorKind]> = [
      [402, 'payment required', 'quota'],
      [400, 'Your credit balance is too low', 'quota'],
      [429, 'QUOTA exceeded for this month', 'quota'],
      [400, 'check your Billing details', 'quota'],
      [429, 'slow down', 'rate_limit'],
      [400, 'bad field', 'invalid_request'],
      [403, 'billing account disabled', 'permission'],
      [529, 'overloaded', 'overloaded'],
      [503, 'unavailable', 'overloaded'],
      [408, 'too slow', 'timeout'],
      [504, 'gateway timeout', 'timeout'],
      [401, 'who are you', 'authentication'],
      [403, 'no', 'permission'],
      [500, 'oops', 'server'],
      [502, 'bad gateway', 'server'],
      [599, 'odd', 'server'],
      [499, 'odd', 'invalid_request'],
      [404, 'no such model', 'invalid_request'],
      [500, 'quota store down', 'server'],
    ];
    for (const [status, message, kind] of cases) {
      expect(classifyHttpFailure(status, message), `${status} ${message}`).toBe(kind);
    }
  });

  it('an error reads as its code and its redacted message; anything else as INTERNAL', () => {
    const key = 'sk-ant-api03-AbCdEf0123456789_xyz-QRSTuvw';
    const err = new AppError('NODE_TIMEOUT', `failed with ${key}`, { details: { a: 1 }, cause: 'root' });
    expect([err.name, err.code, err.details, err.cause, err.retryAfterMs]).toEqual([
      'AppError',
      'NODE_TIMEOUT',
      { a: 1 },
      'root',
      undefined,
    ]);
    expect('cause' in new AppError('INTERNAL', 'x')).toBe(false);
    expect(toErrorInfo(err)).toStrictEqual({ code: 'NODE_TIMEOUT', message: `failed with ${REDACTED}` });
    expect(toErrorInfo(new Error(key))).toStrictEqual({ code: 'INTERNAL', message: 'internal error' });
    expect(toErrorInfo('boom')).toStrictEqual({ code: 'INTERNAL', message: 'internal error' });
    expect(new NotFoundError('workflow wf_1').message).toBe('workflow wf_1 not found');
    expect(new NotFoundError('x').code).toBe('NOT_FOUND');
    const invalid = new ValidationError('bad', [{ path: 'root.a', message: 'no' }]);
    expect([invalid.code, invalid.details]).toEqual(['VALIDATION_ERROR', [{ path: 'root.a', message: 'no' }]]);
  });

  it('a provider failure keeps the wait it was asked for in its record', () => {
    const limited = new ProviderError('rate_limit', 'slow', { retryAfterMs: 1500, cause: 'c' });
    expect([limited.retryAfterMs, limited.cause]).toEqual([1500, 'c']);
    expect(limited.toJSON()).toStrictEqual({
      code: 'LLM_RATE_LIMIT',
      message: 'slow',
      details: { retryAfterMs: 1500 },
    });
    expect(new ProviderError('server', 'down').toJSON()).toStrictEqual({ code: 'LLM_SERVER_ERROR', message: 'down' });
  });

  it('a recorded failure is raised again as it was, an unknown code as INTERNAL', () => {
    const again = fromErrorInfo({ code: 'REVIEW_BLOCKED', message: 'no', details: { by: 'panel' } });
    expect([again.code, again.message, again.details, again.statusCode]).toEqual([
      'REVIEW_BLOCKED',
      'no',
      { by: 'panel' },
      422,
    ]);
    expect(fromErrorInfo({ code: 'NO_SUCH_CODE', message: 'm' }).code).toBe('INTERNAL');
    expect(fromErrorInfo({ code: 'toString', message: 'm' }).code).toBe('INTERNAL');
    expect(fromErrorInfo({ code: 'CANCELLED', message: 'm' }).details).toBeUndefined();
  });
});
