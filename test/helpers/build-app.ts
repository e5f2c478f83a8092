import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createDeps, type Deps, type DepsOverrides } from '../../src/deps.js';
import type { Status } from '../../src/domain/status.js';

export { quickStartExample } from '../../src/api/examples.js';

export interface TestApp {
  app: FastifyInstance;
  deps: Deps;
  close(): Promise<void>;
}

/** A fully wired app over an in-memory database, with the executor taking work. */
export async function buildTestApp(env: Record<string, string> = {}, overrides: DepsOverrides = {}): Promise<TestApp> {
  const config = loadConfig({ DATABASE_PATH: ':memory:', LOG_LEVEL: 'silent', ...env });
  const deps = await createDeps(config, overrides);
  const app = await buildApp(deps);
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
