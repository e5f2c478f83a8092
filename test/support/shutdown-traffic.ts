import { Agent } from 'node:http';
import { expect } from 'vitest';
import { type Outcome, refused, send } from './http-client.js';
import type { ServerProcess } from './server-process.js';

/**
 * The client side of the shutdown suite (test/process/shutdown.test.ts): requests kept coming at a
 * server while it drains, and the drain answer it must give them.
 */

type Request = { path: string; method?: string; headers?: Record<string, string>; body?: string };

export const postJson = (path: string, value: unknown): Request => ({
  path,
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(value),
});

/**
 * One keep-alive connection (a fresh one once the server closes it) firing `pathOf(i)` as soon as
 * the last answer arrived, until the listener is gone; every outcome pushed to `outcomes`, then
 * `afterEach` called.
 */
export async function keepAliveLoop(
  server: ServerProcess,
  pathOf: (i: number) => string,
  outcomes: Outcome[],
  afterEach?: () => void,
): Promise<void> {
  const base = new URL(server.url);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (let i = 0; ; i++) {
      const outcome = await send(agent, base, pathOf(i));
      outcomes.push(outcome);
      afterEach?.();
      if (refused(outcome) || (server.hasExited && outcome.error !== undefined)) return;
    }
  } finally {
    agent.destroy();
  }
}

/** `requests`, each on a fresh connection, sent together every `intervalMs` until the process has exited. */
export async function probeUntilExit(
  server: ServerProcess,
  requests: readonly Request[],
  intervalMs: number,
): Promise<Outcome[]> {
  const base = new URL(server.url);
  const outcomes: Outcome[] = [];
  while (!server.hasExited) {
    outcomes.push(...(await Promise.all(requests.map(({ path, ...options }) => send(undefined, base, path, options)))));
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  return outcomes;
}

/** The drain answer the service gives every late request but liveness (README, graceful shutdown). */
export function expectDrainAnswer(answer: Outcome, graceMs: number): void {
  expect(answer.status, `${answer.path}: ${answer.body}`).toBe(503);
  expect(JSON.parse(answer.body ?? ''), answer.body).toEqual({
    statusCode: 503,
    code: 'SHUTTING_DOWN',
    error: 'Service Unavailable',
    message: expect.any(String),
  });
  expect(answer.headers?.['retry-after'], answer.path).toBe(String(graceMs / 1000));
}
