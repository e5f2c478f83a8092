import { describe, expect, it } from 'vitest';
import {
  AppError,
  ERROR_CODES,
  type ErrorCode,
  meaningOf,
  ProviderError,
  type ProviderErrorKind,
} from '../../../src/domain/errors.js';
import { OUTCOME_REASONS, RETRY_REASONS } from '../../../src/domain/metrics.js';

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
