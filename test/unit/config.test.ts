import { describe, expect, it } from 'vitest';
import { headersTimeoutMs, loadConfig } from '../../src/config.js';

describe('HEADERS_TIMEOUT_MS', () => {
  it('defaults to 20 s, or REQUEST_TIMEOUT_MS when that is shorter', () => {
    expect(headersTimeoutMs(loadConfig({}))).toBe(20_000);
    expect(headersTimeoutMs(loadConfig({ REQUEST_TIMEOUT_MS: '5000' }))).toBe(5_000);
  });

  it('takes the configured value', () => {
    expect(headersTimeoutMs(loadConfig({ HEADERS_TIMEOUT_MS: '1000' }))).toBe(1_000);
  });

  it('is refused above REQUEST_TIMEOUT_MS, below 500 ms or when not an integer', () => {
    expect(() => loadConfig({ HEADERS_TIMEOUT_MS: '40000' })).toThrow(/HEADERS_TIMEOUT_MS/);
    expect(() => loadConfig({ HEADERS_TIMEOUT_MS: '100' })).toThrow(/HEADERS_TIMEOUT_MS/);
    expect(() => loadConfig({ HEADERS_TIMEOUT_MS: 'soon' })).toThrow(/HEADERS_TIMEOUT_MS/);
  });
});
