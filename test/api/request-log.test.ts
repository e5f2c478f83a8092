import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import { definition, prompt, submit } from '../support/api-fixtures.js';
import { buildTestApp, waitForStatus } from '../support/build-app.js';
import { createManualClock } from '../support/manual-clock.js';

function capture(): { lines: Array<Record<string, unknown>>; stream: Writable } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      callback();
    },
  });
  return { lines, stream };
}

describe('request logging (docs/design.md#storage)', () => {
  it('writes exactly one line per request, and a 500 logs its error on that line without leaking it', async () => {
    const { lines, stream } = capture();
    const t = await buildTestApp(
      { LOG_LEVEL: 'info' },
      { logger: createLogger({ level: 'info', destination: stream }) },
    );
    try {
      const res = await submit(t.app, definition(prompt('p')));
      await waitForStatus(t.app, res.json().id, ['completed']);
      lines.length = 0;

      await t.app.inject({ method: 'GET', url: `/v1/workflows/${res.json().id}` });
      await t.app.inject({ method: 'GET', url: '/v1/nope' });
      await t.app.inject({ method: 'POST', url: '/v1/workflows', payload: { name: 'x' } });
      const requestLines = lines.filter((l) => l.msg === 'request' || l.msg === 'request failed');
      expect(requestLines.map((l) => [l.method, l.url, l.status])).toEqual([
        ['GET', `/v1/workflows/${res.json().id}`, 200],
        ['GET', '/v1/nope', 404],
        ['POST', '/v1/workflows', 400],
      ]);
      for (const line of requestLines) expect(typeof line.ms).toBe('number');
      expect(lines).toHaveLength(3);

      lines.length = 0;
      await t.deps.close();
      const failed = await t.app.inject({ method: 'GET', url: '/v1/workflows' });
      expect(failed.statusCode).toBe(500);
      expect(failed.body).not.toMatch(/database|sqlite|\/work\//i);
      const errorLines = lines.filter((l) => l.msg === 'request failed');
      expect(errorLines).toHaveLength(1);
      expect(errorLines[0]).toMatchObject({ level: 50, status: 500, err: { message: expect.any(String) } });
    } finally {
      await t.close();
    }
  });

  it('logs SSE requests once and does not let an open stream block close()', async () => {
    const { lines, stream } = capture();
    // A manual clock nobody advances: the workflow's 10 s latency never elapses, so only close()
    // can end its event stream.
    const t = await buildTestApp(
      {},
      { logger: createLogger({ level: 'info', destination: stream }), clock: createManualClock() },
    );
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    const { id } = (
      await submit(
        t.app,
        definition(prompt('slow'), { agents: { a: { model: 'sim/sonnet', simulate: { latencyMs: 10_000 } } } }),
      )
    ).json();

    let opened: () => void = () => {};
    const open = new Promise<void>((resolve) => {
      opened = resolve;
    });
    const ended = new Promise<void>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port, path: `/v1/workflows/${id}/events`, headers: { accept: 'text/event-stream' } },
        (res) => {
          opened();
          res.resume();
          res.on('end', resolve);
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end();
    });
    // The stream is open once its headers are here (the server registers it in the turn it sends them).
    await open;
    const status = (await t.app.inject({ method: 'GET', url: `/v1/workflows/${id}` })).json().status;
    expect(status).toBe('running');
    // close() resolves with the stream still open at its start, and the stream ends: close ended it.
    await t.close();
    await ended;
    const sseLines = lines.filter((l) => l.msg === 'request' && String(l.url).endsWith('/events'));
    expect(sseLines).toHaveLength(1);
  });

  it('writes one info line per failed workflow with its id and code, and none for a completed one', async () => {
    const { lines, stream } = capture();
    const t = await buildTestApp(
      { LOG_LEVEL: 'info' },
      { logger: createLogger({ level: 'info', destination: stream }) },
    );
    try {
      const ok = (await submit(t.app, definition(prompt('fine')))).json().id;
      const failing = definition(prompt('bad'), {
        agents: { a: { model: 'sim/sonnet', simulate: { responses: [{ error: { status: 401 } }] } } },
      });
      const bad = (await submit(t.app, failing)).json().id;
      await waitForStatus(t.app, ok);
      await waitForStatus(t.app, bad);
      const failures = lines.filter((l) => l.msg === 'workflow failed');
      expect(failures).toHaveLength(1);
      expect(failures[0]).toMatchObject({ level: 30, workflowId: bad, code: 'LLM_AUTHENTICATION' });
    } finally {
      await t.close();
    }
  });
});
