import { describe, expect, it } from 'vitest';
import { isSecretKey, REDACTED, redactSecrets, redactUrl, redactValue } from '../../../src/domain/redact.js';

const ANTHROPIC_KEY = 'sk-ant-api03-AbCdEf0123456789_xyz-QRSTuvw';
const OPENAI_KEY = 'sk-proj-0123456789abcdefABCDEF';

describe('redactSecrets', () => {
  it('redacts provider keys anywhere in text', () => {
    const text = `anthropic ${ANTHROPIC_KEY}, openai ${OPENAI_KEY}.`;
    expect(redactSecrets(text)).toBe(`anthropic ${REDACTED}, openai ${REDACTED}.`);
  });

  it('redacts bearer tokens but keeps the scheme word and prose', () => {
    expect(redactSecrets('Authorization: Bearer abc.def-123')).toBe(`Authorization: Bearer ${REDACTED}`);
    expect(redactSecrets('header bearer 7f3a9c0d1e2b')).toBe(`header bearer ${REDACTED}`);
    expect(redactSecrets('the Bearer of bad news')).toBe('the Bearer of bad news');
  });

  it('redacts string values of secret-named JSON fields, plain and escaped', () => {
    const json = JSON.stringify({ user: 'ann', password: 'hunter2', apiKey: 'k1', api_key: 'k2', maxTokens: 5 });
    expect(JSON.parse(redactSecrets(json))).toEqual({
      user: 'ann',
      password: REDACTED,
      apiKey: REDACTED,
      api_key: REDACTED,
      maxTokens: 5,
    });

    const nested = JSON.stringify({ output: JSON.stringify({ client_secret: 'abc', name: 'x' }) });
    const redacted = redactSecrets(nested);
    expect(JSON.parse(JSON.parse(redacted).output)).toEqual({ client_secret: REDACTED, name: 'x' });

    expect(redactSecrets('{"Authorization" : "Basic dXNlcjpwYXNz"}')).toBe(`{"Authorization" : "${REDACTED}"}`);
  });

  it('redacts name=value assignments with secret names', () => {
    expect(redactSecrets('GET /cb?access_token=abc123&page=2')).toBe(`GET /cb?access_token=${REDACTED}&page=2`);
    expect(redactSecrets('PASSWORD=swordfish ok')).toBe(`PASSWORD=${REDACTED} ok`);
    expect(redactSecrets('maxTokens=1000')).toBe('maxTokens=1000');
  });

  it('redacts the colon form and its quoted variants', () => {
    expect(redactSecrets('login with password: hunter2 please')).toBe(`login with password: ${REDACTED} please`);
    expect(redactSecrets('Password:hunter2')).toBe(`Password:${REDACTED}`);
    expect(redactSecrets("{'password': 'hunter 2'}")).toBe(`{'password': '${REDACTED}'}`);
    expect(redactSecrets('api_key : "k-123 456"')).toBe(`api_key : "${REDACTED}"`);
    expect(redactSecrets("'token' = t0k3n")).toBe(`'token' = ${REDACTED}`);
    expect(redactSecrets('client_secret:\tabc')).toBe(`client_secret:\t${REDACTED}`);
    expect(redactSecrets('Authorization: Basic dXNlcjpwYXNz')).toBe(`Authorization: Basic ${REDACTED}`);
    // A key at a line end keeps the next line's words.
    expect(redactSecrets('password:\nnext line')).toBe('password:\nnext line');
  });

  it('keeps a JSON log line valid: bare JSON values after a quoted key are left alone', () => {
    const line = JSON.stringify({ msg: 'user said password: hunter2', token: 5, password: null });
    const redacted = redactSecrets(line);
    expect(() => JSON.parse(redacted)).not.toThrow();
    expect(JSON.parse(redacted)).toEqual({ msg: `user said password: ${REDACTED}`, token: 5, password: null });
  });

  it('does not eat harmless text: placeholders and prose stay', () => {
    const hint = 'set API_KEYS=tenant:key to serve a network';
    expect(redactSecrets(hint)).toBe(hint);
    expect(redactSecrets('API_KEYS: <tenant>:<key>')).toBe('API_KEYS: <tenant>:<key>');
    expect(redactSecrets('export TOKEN=$GITHUB_TOKEN')).toBe('export TOKEN=$GITHUB_TOKEN');
    expect(redactSecrets('reset your password: see the docs')).toBe(`reset your password: ${REDACTED} the docs`);
    expect(redactSecrets('API_KEYS=acme:0123456789abcdef0123')).toBe(`API_KEYS=${REDACTED}`);
  });

  it('returns the very same string when nothing looks like a secret', () => {
    const text = 'Summarise the quarterly report in 3 bullet points.';
    expect(redactSecrets(text)).toBe(text);
    expect(redactSecrets('')).toBe('');
    expect(redactSecrets('used 1200 tokens')).toBe('used 1200 tokens');
  });

  it('keeps JSON valid when redacting inside a JSON document', () => {
    const line = JSON.stringify({
      msg: `calling with ${ANTHROPIC_KEY} and password=a"b\\c`,
      headers: 'Bearer x/y+z==',
    });
    expect(() => JSON.parse(redactSecrets(line))).not.toThrow();
    expect(redactSecrets(line)).not.toContain(ANTHROPIC_KEY);
  });
});

describe('isSecretKey', () => {
  it.each([
    'password',
    'dbPassword',
    'secret',
    'clientSecret',
    'token',
    'accessToken',
    'refresh_token',
    'apiKey',
    'api_key',
    'X-Api-Key',
    'authorization',
    'cookie',
  ])('treats %s as secret', (key) => expect(isSecretKey(key)).toBe(true));
  it.each(['maxTokens', 'inputTokens', 'tokenCount', 'name', 'keyHash', 'idempotencyKey', 'model'])(
    'treats %s as ordinary',
    (key) => expect(isSecretKey(key)).toBe(false),
  );
});

describe('redactValue', () => {
  it('redacts secret-named keys at any depth and secrets inside strings', () => {
    const input = {
      model: 'sim/sonnet',
      usage: { inputTokens: 10, outputTokens: 3 },
      request: { headers: { authorization: 'Bearer abc123', 'x-request-id': 'r1' }, apiKey: 42 },
      notes: [`key was ${OPENAI_KEY}`, 'plain'],
      token: null,
    };
    expect(redactValue(input)).toEqual({
      model: 'sim/sonnet',
      usage: { inputTokens: 10, outputTokens: 3 },
      request: { headers: { authorization: REDACTED, 'x-request-id': 'r1' }, apiKey: REDACTED },
      notes: [`key was ${REDACTED}`, 'plain'],
      token: null,
    });
  });

  it('does not mutate its input and shares the untouched parts', () => {
    const clean = { a: [1, 2, { b: 'text' }] };
    const input = { clean, password: 'pw', list: ['x', OPENAI_KEY] };
    const snapshot = structuredClone(input);
    const output = redactValue(input) as typeof input;
    expect(input).toEqual(snapshot);
    expect(output).not.toBe(input);
    expect(output.clean).toBe(clean);
  });

  it('returns the same reference when there is nothing to redact', () => {
    const value = { a: 1, b: ['x', { c: true, d: null }], e: 'hello' };
    expect(redactValue(value)).toBe(value);
    expect(redactValue('plain')).toBe('plain');
    expect(redactValue(7)).toBe(7);
    expect(redactValue(undefined)).toBeUndefined();
  });

  it('is cycle-safe and keeps shared (non-cyclic) references intact', () => {
    const node: Record<string, unknown> = { name: 'n', secret: 's' };
    node.self = node;
    const shared = { value: 'v' };
    const output = redactValue({ node, left: shared, right: shared }) as Record<string, Record<string, unknown>>;
    expect(output.node).toEqual({ name: 'n', secret: REDACTED, self: '[Circular]' });
    expect(output.left).toBe(shared);
    expect(output.right).toBe(shared);
    expect(node.secret).toBe('s');
  });

  it('passes non-plain objects through unchanged', () => {
    const date = new Date(0);
    const buffer = Buffer.from('sk-not-walked');
    const output = redactValue({ date, buffer }) as { date: Date; buffer: Buffer };
    expect(output.date).toBe(date);
    expect(output.buffer).toBe(buffer);
  });

  it('survives very deep nesting', () => {
    let deep: Record<string, unknown> = { leaf: 'x' };
    for (let i = 0; i < 10_000; i += 1) deep = { child: deep };
    expect(() => JSON.stringify(redactValue(deep))).not.toThrow();
  });
});

describe('redactUrl', () => {
  it('shows a secret hidden by percent-encoding or + decoded and redacted', () => {
    expect(redactUrl('/v1/x?q=password%3A%20hunter2')).toBe(`/v1/x?q=password: ${REDACTED}`);
    expect(redactUrl('/v1/x?q=password:+hunter2')).toBe(`/v1/x?q=password: ${REDACTED}`);
    expect(redactUrl('/v1/x?q=a%2Bb&token=abc123')).toBe(`/v1/x?q=a+b&token=${REDACTED}`);
  });

  it('leaves a URL as it came when decoding shows no secret, or cannot decode', () => {
    expect(redactUrl('/v1/x?q=hello%20world')).toBe('/v1/x?q=hello%20world');
    expect(redactUrl('/v1/x?a+b')).toBe('/v1/x?a+b');
    // Malformed escapes hide nothing; a plain secret is the log line's redaction's to catch.
    expect(redactUrl('/v1/x?q=%E0%A4%A&password=hunter2')).toBe('/v1/x?q=%E0%A4%A&password=hunter2');
    expect(redactUrl('/v1/x?token=abc123')).toBe('/v1/x?token=abc123');
  });
});
