import { Agent } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { type Outcome, refused, send } from '../helpers/http-client.js';
import { errorRecords, startServer, stopAllServers, tempDir } from '../helpers/server-process.js';

/**
 * SIGTERM under a steady stream of keep-alive requests (docs/design.md#execution,
 * docs/design.md#http-api-conventions): every request written
 * before the signal gets a whole answer, every later one a JSON 503 SHUTTING_DOWN with
 * `retry-after` and `connection: close` (liveness still a 200), or ECONNREFUSED once the listener
 * is gone, and the process exits 0. No request may end in a reset or a hang-up.
 */

const tmp = tempDir('baton-load-shutdown-');
afterAll(async () => {
  await stopAllServers();
  tmp.cleanup();
});

describe('graceful shutdown under load', () => {
  it('answers every request written before SIGTERM, 503s the rest properly, never resets, exits 0', {
    timeout: 60_000,
  }, async () => {
    const graceMs = 8_000;
    const callMs = 4_000;
    const server = await startServer({ dbPath: tmp.dbPath('load.db'), shutdownGraceMs: graceMs });
    const base = new URL(server.url);
    // A model call in flight at SIGTERM keeps the executor draining for a few seconds: the window
    // in which the listener must keep answering 503 rather than resetting.
    const slow = await fetch(`${server.url}/v1/workflows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'in-flight',
        agents: { a: { model: 'sim/haiku', simulate: { latencyMs: callMs, responses: [{ text: 'done' }] } } },
        root: { type: 'prompt', name: 'slow', agent: 'a', user: 'take your time' },
      }),
    });
    expect(slow.status).toBe(202);
    const submittedAt = Date.now();

    const CONNECTIONS = 8;
    const outcomes: Outcome[] = [];
    let sigtermAt = 0;
    let exitedAt = 0;
    void server.exited.then(() => {
      exitedAt = Date.now();
    });
    // Mid-stream: after a few hundred answers, or 1.5 s on a slow machine.
    const maybeSignal = () => {
      if (sigtermAt === 0 && (outcomes.length >= 400 || Date.now() - submittedAt > 1_500)) {
        sigtermAt = Date.now();
        server.kill('SIGTERM');
      }
    };

    // Each loop is one keep-alive connection (a fresh one once the server closes it), firing its
    // next request as soon as the last one is answered, until the listener is gone.
    const loop = async (n: number) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        for (let i = 0; ; i++) {
          const outcome = await send(agent, base, (n + i) % 2 === 0 ? '/healthz' : '/v1/workflows?limit=5');
          outcomes.push(outcome);
          maybeSignal();
          if (refused(outcome) || (server.hasExited && outcome.error !== undefined)) return;
        }
      } finally {
        agent.destroy();
      }
    };
    await Promise.all(Array.from({ length: CONNECTIONS }, (_, n) => loop(n)));
    const exit = await server.exited;

    expect(exit).toEqual({ code: 0, signal: null });
    expect(errorRecords(server)).toEqual([]);
    // The signal came while the call was in flight, and the process waited for it.
    expect(sigtermAt - submittedAt).toBeLessThan(callMs - 1_000);
    expect(exitedAt - submittedAt).toBeGreaterThanOrEqual(callMs - 100);

    const before = outcomes.filter((o) => o.writtenAt !== undefined && o.writtenAt < sigtermAt);
    const after = outcomes.filter((o) => !before.includes(o));
    const failed = (list: Outcome[]) => list.filter((o) => o.error !== undefined);
    const summary = {
      total: outcomes.length,
      before: before.length,
      after: after.length,
      after503: after.filter((o) => o.status === 503).length,
      afterRefused: after.filter(refused).length,
      beforeErrors: failed(before).map((o) => o.error),
      afterErrors: failed(after)
        .filter((o) => !refused(o))
        .map((o) => `${o.error} (${o.reused ? 'kept-alive' : 'fresh'} socket)`),
      exitMs: exitedAt - sigtermAt,
    };
    console.log('shutdown under load', JSON.stringify(summary));

    // Requests already on the wire get whole answers.
    expect(failed(before), JSON.stringify(summary)).toEqual([]);
    // Later ones: answered, or refused once the listener is closed — never reset or hung up.
    expect(summary.afterErrors, JSON.stringify(summary)).toEqual([]);
    // The drain answer is the service's own: JSON, SHUTTING_DOWN, retry-after, connection: close.
    const unavailable = outcomes.filter((o) => o.status === 503);
    expect(unavailable.length, JSON.stringify(summary)).toBeGreaterThan(10);
    for (const o of unavailable) {
      expect(JSON.parse(o.body ?? ''), o.body).toEqual({
        statusCode: 503,
        code: 'SHUTTING_DOWN',
        error: 'Service Unavailable',
        message: expect.any(String),
      });
      expect(o.headers?.['retry-after']).toBe(String(graceMs / 1000));
      expect(o.headers?.connection).toBe('close');
    }
    for (const o of outcomes.filter((x) => x.status !== undefined && x.status !== 503)) {
      expect(o.status, `${o.path}: ${o.body}`).toBe(200);
    }
    // Once a 503 has been seen the service is draining: whatever is sent from then on is a 503,
    // except liveness, which still answers 200, and closes its connection too.
    const drainSeenAt = Math.min(...unavailable.map((o) => o.answeredAt ?? Number.POSITIVE_INFINITY));
    const sentWhileDraining = outcomes.filter((o) => o.status !== undefined && (o.writtenAt ?? 0) > drainSeenAt);
    const live = sentWhileDraining.filter((o) => o.path === '/healthz');
    expect(live.length).toBeGreaterThan(0);
    for (const o of live) expect([o.status, o.headers?.connection]).toEqual([200, 'close']);
    for (const o of sentWhileDraining.filter((x) => x.path !== '/healthz')) expect(o.status).toBe(503);
  });
});
