import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { type BuildAppOptions, buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createDeps, type Deps, type DepsOverrides } from '../../src/deps.js';
import type { Status } from '../../src/domain/status.js';
import { type FakeServer, type ReplySource, startFakeAnthropic } from './fake-anthropic.js';
import { startFakeOpenAi } from './fake-openai.js';
import { freshPostgresDatabase } from './postgres-database.js';

export { quickStartExample } from '../../src/api/http/examples.js';

export interface TestApp {
  app: FastifyInstance;
  deps: Deps;
  close(): Promise<void>;
}

/**
 * A fully wired app over an in-memory database, with the executor taking work. With
 * BATON_TEST_DATABASE=postgres (the `postgres` project of vitest.config.ts) an app given no
 * DATABASE_URL gets a fresh PostgreSQL database of its own instead, dropped when it closes.
 */
export async function buildTestApp(
  env: Record<string, string> = {},
  overrides: DepsOverrides = {},
  appOptions: BuildAppOptions = {},
): Promise<TestApp> {
  const postgres =
    process.env.BATON_TEST_DATABASE === 'postgres' && env.DATABASE_URL === undefined
      ? await freshPostgresDatabase()
      : undefined;
  const config = loadConfig({
    DATABASE_PATH: ':memory:',
    LOG_LEVEL: 'silent',
    ...env,
    ...(postgres ? { DATABASE_URL: postgres.url } : {}),
  });
  const deps = await createDeps(config, overrides).catch(async (err: unknown) => {
    await postgres?.drop();
    throw err;
  });
  const app = await buildApp(deps, appOptions);
  await app.ready();
  await deps.executor.start();
  let closed: Promise<void> | undefined;
  return {
    app,
    deps,
    close() {
      closed ??= (async () => {
        await app.close();
        await deps.close();
        await postgres?.drop();
      })();
      return closed;
    },
  };
}

/** Polls GET /v1/workflows/:id until its status is one of `statuses`; returns the last body. */
export async function waitForStatus(
  app: FastifyInstance,
  id: string,
  statuses: readonly Status[] = ['completed', 'failed', 'cancelled'],
  timeoutMs = 5_000,
  headers: Record<string, string> = {},
): Promise<Record<string, unknown> & { status: Status }> {
  const deadline = Date.now() + timeoutMs;
  let last: (Record<string, unknown> & { status: Status }) | undefined;
  for (;;) {
    const res = await app.inject({ method: 'GET', url: `/v1/workflows/${id}`, headers });
    if (res.statusCode !== 200) throw new Error(`GET /v1/workflows/${id} answered ${res.statusCode}: ${res.body}`);
    last = res.json();
    if (last && statuses.includes(last.status)) return last;
    if (Date.now() > deadline) {
      throw new Error(
        `workflow ${id} is still ${last?.status} after ${timeoutMs} ms (waiting for ${statuses.join('|')})`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

interface FakeAppOptions {
  defaultReply?: ReplySource;
  env?: Record<string, string>;
  /** Passed to createDeps, e.g. a manual `clock` that drives deadlines and retry waits. */
  overrides?: DepsOverrides;
}

interface FakeApp {
  readonly fake: FakeServer;
  readonly t: TestApp;
}

/**
 * A test app whose `anthropic/*` models reach a fake Anthropic API on 127.0.0.1 through the real
 * SDK. Registers its own lifecycle hooks: the fake's request log is emptied before every test.
 */
export function useAnthropicTestApp(options: FakeAppOptions = {}): FakeApp {
  return useFakeProviderApp(
    'Anthropic',
    startFakeAnthropic,
    (url) => ({
      ANTHROPIC_API_KEY: 'sk-ant-test-key-000',
      ANTHROPIC_BASE_URL: url,
      ...options.env,
    }),
    options,
  );
}

/** The same for `openai/*` models and a fake OpenAI-compatible `/chat/completions` server. */
export function useOpenAiTestApp(options: FakeAppOptions = {}): FakeApp {
  return useFakeProviderApp(
    'OpenAI',
    startFakeOpenAi,
    (url) => ({
      OPENAI_API_KEY: 'sk-openai-test-key-000',
      OPENAI_BASE_URL: url,
      ...options.env,
    }),
    options,
  );
}

function useFakeProviderApp(
  name: string,
  start: (options: { defaultReply?: ReplySource }) => Promise<FakeServer>,
  env: (url: string) => Record<string, string>,
  { defaultReply, overrides }: FakeAppOptions,
): FakeApp {
  const state: { fake?: FakeServer; t?: TestApp } = {};
  beforeAll(async () => {
    state.fake = await start(defaultReply ? { defaultReply } : {});
    state.t = await buildTestApp(env(state.fake.url), overrides);
  });
  afterAll(async () => {
    await state.t?.close();
    await state.fake?.close();
  });
  beforeEach(() => {
    if (state.fake) state.fake.requests.length = 0;
  });
  return {
    get fake() {
      if (!state.fake) throw new Error(`the fake ${name} server starts in beforeAll`);
      return state.fake;
    },
    get t() {
      if (!state.t) throw new Error('the test app starts in beforeAll');
      return state.t;
    },
  };
}
