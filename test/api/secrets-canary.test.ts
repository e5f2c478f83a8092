import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { createLogger } from '../../src/logging/logger.js';
import { allEvents, type Json, submit } from '../helpers/api-fixtures.js';
import { waitForStatus } from '../helpers/build-app.js';
import { type FakeServer, startFakeAnthropic } from '../helpers/fake-anthropic.js';
import { tempDir } from '../helpers/server-process.js';

/**
 * The hardening issue's secrets acceptance: canary secrets in a provider error (through the real
 * Anthropic SDK and through the simulated provider), in a prompt (the colon form), and in inputs
 * appear 0 times in HTTP responses, log lines, spans, events and the database files (-wal and -shm
 * included) after the runs.
 */
const CANARIES = {
  providerKeyInError: 'sk-ant-api03-CANARYerr0123456789abcdefXYZ',
  passwordInError: 'CANARY-err-pw-4242',
  passwordInPrompt: 'CANARY-prompt-pw-777',
  tokenInInput: 'CANARY-input-token-31337',
  passwordInData: 'CANARY-data-pw-9000',
};

const tmp = tempDir('baton-secrets-');
const logLines: string[] = [];
let fake: FakeServer;
let deps: Deps;
let app: Awaited<ReturnType<typeof buildApp>>;
const responses: string[] = [];

async function get(url: string): Promise<string> {
  const res = await app.inject({ method: 'GET', url });
  responses.push(res.body);
  return res.body;
}

beforeAll(async () => {
  fake = await startFakeAnthropic();
  fake.setDefault({
    status: 400,
    body: {
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: `bad key ${CANARIES.providerKeyInError}; the account password: ${CANARIES.passwordInError}`,
      },
    },
  });
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      logLines.push(String(chunk));
      callback();
    },
  });
  const config = loadConfig({
    DATABASE_PATH: tmp.dbPath(),
    LOG_LEVEL: 'debug',
    ANTHROPIC_API_KEY: 'sk-ant-test-key-000',
    ANTHROPIC_BASE_URL: fake.url,
  });
  deps = await createDeps(config, { logger: createLogger({ level: 'debug', destination }) });
  app = await buildApp(deps);
  await app.ready();
  await deps.executor.start();
});

afterAll(async () => {
  await app.close();
  await deps.close();
  await fake.close();
  tmp.cleanup();
});

const workflows: Json[] = [
  {
    name: 'provider-error',
    agents: { a: { model: 'anthropic/claude-haiku-5-5' } },
    root: { type: 'prompt', name: 'ask', agent: 'a', user: 'hello' },
  },
  {
    name: 'sim-error',
    agents: {
      a: {
        model: 'sim/sonnet',
        simulate: { responses: [{ error: { status: 400, message: `denied, password: ${CANARIES.passwordInError}` } }] },
      },
    },
    root: { type: 'prompt', name: 'ask', agent: 'a', user: 'hello' },
  },
  {
    name: 'secrets-in-prompt-and-input',
    input: { service: 'billing', token: CANARIES.tokenInInput },
    agents: { a: { model: 'sim/sonnet', system: 'Use {{input.token}} carefully.' } },
    root: {
      type: 'sequence',
      name: 'main',
      steps: [
        {
          type: 'prompt',
          name: 'echo',
          agent: 'a',
          // The simulated model echoes the user message: its answer carries the canaries too.
          user: `log in with password: ${CANARIES.passwordInPrompt} for {{input.service}}`,
          data: { credentials: { password: CANARIES.passwordInData }, token: '{{input.token}}' },
        },
        { type: 'prompt', name: 'after', agent: 'a', user: 'Previous: {{steps.echo.output}}' },
      ],
    },
  },
];

describe('canary secrets', () => {
  it('appear in no response, log line, span, event or database file', async () => {
    const ids: string[] = [];
    for (const body of workflows) {
      const res = await submit(app, body);
      responses.push(res.body);
      expect(res.statusCode, res.body).toBe(202);
      ids.push((res.json() as { id: string }).id);
    }
    for (const id of ids) {
      const view = await waitForStatus(app, id);
      const trace = view.traceId as string;
      await get(`/v1/workflows/${id}`);
      await get(`/v1/workflows/${id}/tree?format=json`);
      await get(`/v1/workflows/${id}/tree?format=text`);
      await get(`/v1/workflows/${id}/reflections`);
      await get(`/v1/workflows/${id}/metrics`);
      await get(`/v1/traces/${trace}`);
      responses.push(JSON.stringify(await allEvents(app, id)));
    }
    expect(fake.requests.length).toBeGreaterThan(0);
    await get('/v1/workflows?limit=100');
    await get('/v1/traces?limit=100');
    const cache = JSON.parse(await get('/v1/cache')) as { entries: Array<{ key: string }> };
    for (const entry of cache.entries) await get(`/v1/cache/${encodeURIComponent(entry.key)}`);
    await get('/metrics');

    // Closed, so every page is in the files and nothing more can be written.
    await app.close();
    await deps.close();
    const files = readdirSync(tmp.dir).map((name) => join(tmp.dir, name));
    expect(files.some((f) => f.endsWith('-wal') || f.endsWith('.db'))).toBe(true);
    const places: Array<[string, string]> = [
      ...responses.map((body, i): [string, string] => [`response ${i}`, body]),
      ['logs', logLines.join('')],
      ...files.map((file): [string, string] => [file, readFileSync(file).toString('latin1')]),
    ];
    const leaks: string[] = [];
    for (const [where, text] of places) {
      for (const [name, canary] of Object.entries(CANARIES))
        if (text.includes(canary)) leaks.push(`${name} in ${where}`);
    }
    expect(leaks).toEqual([]);
    expect(logLines.length).toBeGreaterThan(0);
  });
});
