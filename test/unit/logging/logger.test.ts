import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { REDACTED } from '../../../src/domain/redact.js';
import { createLogger } from '../../../src/logging/logger.js';

const ANTHROPIC_KEY = 'sk-ant-api03-AbCdEf0123456789_xyz-QRSTuvw';

function memoryLogger(level = 'info') {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      callback();
    },
  });
  const logger = createLogger({ level, destination });
  return { logger, lines, records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe('createLogger', () => {
  it('censors secret-bearing fields and request headers', () => {
    const { logger, records, lines } = memoryLogger();
    logger.info(
      {
        req: {
          method: 'GET',
          headers: { authorization: 'Bearer abc123', cookie: 'sid=1', 'x-api-key': 'k', accept: '*/*' },
        },
        provider: { name: 'anthropic', apiKey: ANTHROPIC_KEY },
        user: { password: 'hunter2', token: 't0k3n', secret: 's' },
        usage: { maxTokens: 100 },
      },
      'request',
    );
    const [record] = records();
    expect(record).toMatchObject({
      msg: 'request',
      req: {
        method: 'GET',
        headers: { authorization: REDACTED, cookie: REDACTED, 'x-api-key': REDACTED, accept: '*/*' },
      },
      provider: { name: 'anthropic', apiKey: REDACTED },
      user: { password: REDACTED, token: REDACTED, secret: REDACTED },
      usage: { maxTokens: 100 },
    });
    expect(lines.join('\n')).not.toMatch(/hunter2|t0k3n|abc123|sk-ant-/);
  });

  it('redacts keys inside messages, error messages, stacks and causes', () => {
    const { logger, lines, records } = memoryLogger();
    const cause = new Error(`upstream refused Bearer ${'a1'.repeat(12)}`);
    const error = new Error(`401 from provider with key ${ANTHROPIC_KEY}`, { cause });
    logger.error(error);
    logger.error({ err: error }, `failed: ${ANTHROPIC_KEY}`);
    logger.warn(`retrying with {"apiKey":"${ANTHROPIC_KEY}"}`);

    const all = lines.join('\n');
    expect(all).not.toContain(ANTHROPIC_KEY);
    expect(all).not.toContain('a1a1a1a1');
    const [first, second, third] = records();
    expect(first?.msg).toBe(`401 from provider with key ${REDACTED}`);
    expect((first?.err as { message?: string } | undefined)?.message).toContain(REDACTED);
    expect(second?.msg).toBe(`failed: ${REDACTED}`);
    expect(third?.msg).toBe(`retrying with {"apiKey":"${REDACTED}"}`);
  });

  it('honours the level and leaves ordinary lines untouched', () => {
    const { logger, records } = memoryLogger('warn');
    logger.info('dropped');
    logger.child({ module: 'engine', workflowId: 'wf_1' }).warn({ tokens: 12 }, 'slow step');
    const logged = records();
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: 40, module: 'engine', workflowId: 'wf_1', tokens: 12, msg: 'slow step' });
  });
});
