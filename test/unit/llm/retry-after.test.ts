import { describe, expect, it } from 'vitest';
import { redact, retryAfterMs } from '../../../src/llm/retry-after.js';

const now = Date.parse('2025-01-01T00:00:00Z');

describe('retryAfterMs', () => {
  it('prefers retry-after-ms', () => {
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '250', 'retry-after': '9' }), now)).toBe(250);
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '12.3' }), now)).toBe(13);
  });

  it('reads retry-after as seconds or as an HTTP date', () => {
    expect(retryAfterMs(new Headers({ 'retry-after': '2' }), now)).toBe(2000);
    expect(retryAfterMs(new Headers({ 'retry-after': '0.5' }), now)).toBe(500);
    expect(retryAfterMs(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:05 GMT' }), now)).toBe(5000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'Tue, 31 Dec 2024 23:59:00 GMT' }), now)).toBe(0);
  });

  it('ignores absent or unparseable hints', () => {
    expect(retryAfterMs(undefined)).toBeUndefined();
    expect(retryAfterMs(new Headers())).toBeUndefined();
    expect(retryAfterMs(new Headers({ 'retry-after-ms': 'soon' }), now)).toBeUndefined();
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '-5', 'retry-after': '1' }), now)).toBe(1000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'later' }), now)).toBeUndefined();
  });
});

describe('redact', () => {
  it('removes every occurrence of the secret', () => {
    expect(redact('key sk-123456 and sk-123456', 'sk-123456')).toBe('key [redacted] and [redacted]');
    expect(redact('nothing here', undefined)).toBe('nothing here');
  });
});
