import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allEvents, definition, prompt, submit } from '../support/api-fixtures.js';
import { buildTestApp, quickStartExample, type TestApp, waitForStatus } from '../support/build-app.js';

let t: TestApp;
let base: { host: string; port: number };
beforeAll(async () => {
  t = await buildTestApp({ SSE_KEEPALIVE_MS: '100' });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const address = t.app.server.address() as AddressInfo;
  base = { host: '127.0.0.1', port: address.port };
});
afterAll(async () => {
  await t.close();
});

interface Frame {
  id?: number;
  event?: string;
  data?: { seq: number; type: string; nodeId: string | null; at: string; payload: Record<string, unknown> };
}

interface StreamResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  frames: Frame[];
  comments: string[];
  /** True when the server ended the response (as opposed to the test giving up). */
  ended: boolean;
}

/** Frames and comment lines of the SSE text received so far. */
function parse(raw: string): { frames: Frame[]; comments: string[] } {
  const frames: Frame[] = [];
  const comments: string[] = [];
  for (const block of raw.split('\n\n')) {
    if (block.trim() === '') continue;
    const frame: Frame = {};
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) comments.push(line);
      else if (line.startsWith('id: ')) frame.id = Number(line.slice(4));
      else if (line.startsWith('event: ')) frame.event = line.slice(7);
      else if (line.startsWith('data: ')) frame.data = JSON.parse(line.slice(6));
    }
    if (frame.id !== undefined) frames.push(frame);
  }
  return { frames, comments };
}

/**
 * Reads an SSE response to its end, parsing frames and comment lines. The test hangs up instead
 * (`ended` false) once `until` holds for the complete frames received, or after `timeoutMs` — a
 * guard against a stream that never ends, not a measurement.
 */
function readStream(
  path: string,
  headers: Record<string, string>,
  options: { timeoutMs?: number; until?: (frames: Frame[]) => boolean } = {},
): Promise<StreamResult> {
  const { timeoutMs = 5_000, until } = options;
  return new Promise((resolve, reject) => {
    const req = httpRequest({ ...base, path, headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      let raw = '';
      let ended = false;
      let settled = false;
      res.setEncoding('utf8');
      const done = (): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, ...parse(raw), ended });
      };
      res.on('data', (chunk: string) => {
        raw += chunk;
        // Only whole frames (up to the last blank line) are judged.
        const complete = raw.slice(0, Math.max(0, raw.lastIndexOf('\n\n')));
        if (until?.(parse(complete).frames)) {
          done();
          req.destroy();
        }
      });
      res.on('end', () => {
        ended = true;
        done();
      });
      const timer = setTimeout(() => {
        req.destroy();
        done();
      }, timeoutMs);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('GET /v1/workflows/:id/events as SSE', () => {
  it('resumes after Last-Event-ID: 3 with seq 4… in order and closes after workflowEnd', async () => {
    const { id } = (await submit(t.app, quickStartExample)).json();
    await waitForStatus(t.app, id, ['completed']);
    const stored = await allEvents(t.app, id);

    const result = await readStream(`/v1/workflows/${id}/events`, { 'last-event-id': '3' });
    expect(result.status).toBe(200);
    expect(result.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(result.headers['cache-control']).toBe('no-cache');
    expect(result.headers['x-accel-buffering']).toBe('no');
    expect(result.ended).toBe(true);

    const seqs = result.frames.map((f) => f.id);
    expect(seqs[0]).toBe(4);
    expect(seqs).toEqual(stored.filter((e) => e.seq > 3).map((e) => e.seq));
    expect(seqs).toEqual(seqs.map((_, i) => 4 + i));
    for (const frame of result.frames) {
      expect(frame.event).toBe(frame.data?.type);
      expect(frame.data?.seq).toBe(frame.id);
      expect(frame.data?.at).toMatch(/Z$/);
    }
    expect(result.frames.at(-1)?.event).toBe('workflowEnd');
  });

  it('?after= works as the resume point too', async () => {
    const { id } = (await submit(t.app, definition(prompt('p')))).json();
    await waitForStatus(t.app, id, ['completed']);
    const result = await readStream(`/v1/workflows/${id}/events?after=2`, {});
    expect(result.frames[0]?.id).toBe(3);
    expect(result.ended).toBe(true);
  });

  it('closes at once for a finished workflow with nothing after the resume point', async () => {
    const { id } = (await submit(t.app, definition(prompt('p')))).json();
    await waitForStatus(t.app, id, ['completed']);
    const last = (await allEvents(t.app, id)).at(-1)?.seq ?? 0;
    const result = await readStream(`/v1/workflows/${id}/events`, { 'last-event-id': String(last) });
    // Ended by the server (not by readStream giving up), with nothing to wait for, and before its
    // first keep-alive (SSE_KEEPALIVE_MS is 100 here): it closed at once instead of idling open.
    expect(result.ended).toBe(true);
    expect(result.frames).toEqual([]);
    expect(result.comments).toEqual([]);
  });

  it('streams a running workflow live from seq 1, without gaps or duplicates, with keep-alives', async () => {
    const { id } = (
      await submit(
        t.app,
        definition(
          { type: 'sequence', name: 'main', steps: [prompt('one'), prompt('two')] },
          { agents: { a: { model: 'sim/sonnet', simulate: { latencyMs: 250 } } } },
        ),
      )
    ).json();
    const result = await readStream(`/v1/workflows/${id}/events`, {});
    expect(result.ended).toBe(true);
    const seqs = result.frames.map((f) => f.id);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(result.frames[0]?.event).toBe('workflowStart');
    expect(result.frames.at(-1)?.event).toBe('workflowEnd');
    expect(result.comments).toContain(': keep-alive');
    expect(seqs).toEqual((await allEvents(t.app, id)).map((e) => e.seq));
  });

  it('rejects a malformed Last-Event-ID with 400', async () => {
    const { id } = (await submit(t.app, definition(prompt('p')))).json();
    const res = await t.app.inject({
      method: 'GET',
      url: `/v1/workflows/${id}/events`,
      headers: { accept: 'text/event-stream', 'last-event-id': 'abc' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ path: 'headers.last-event-id' }] });
  });

  it('stops streaming when the client goes away', async () => {
    const { id } = (
      await submit(
        t.app,
        definition(prompt('slow'), { agents: { a: { model: 'sim/sonnet', simulate: { latencyMs: 10_000 } } } }),
      )
    ).json();
    // Hang up once the call is under way: the stream is still open (its workflow has 10 s to go).
    const result = await readStream(
      `/v1/workflows/${id}/events`,
      {},
      {
        until: (frames) => frames.some((f) => f.event === 'agentPromptStart'),
      },
    );
    expect(result.ended).toBe(false);
    expect(result.frames.map((f) => f.event)).toContain('agentPromptStart');
    await t.app.inject({ method: 'POST', url: `/v1/workflows/${id}/cancel` });
  });
});

describe('GET /v1/workflows/:id/events as JSON', () => {
  it('pages with ?after= and ?limit=', async () => {
    const { id } = (await submit(t.app, quickStartExample)).json();
    await waitForStatus(t.app, id, ['completed']);
    const res = await t.app.inject({ method: 'GET', url: `/v1/workflows/${id}/events?after=3&limit=2` });
    expect(res.statusCode).toBe(200);
    const page = res.json();
    expect(page.items.map((e: { seq: number }) => e.seq)).toEqual([4, 5]);
    expect(page.nextAfter).toBe(5);
    expect(page.items[0]).toEqual({
      seq: 4,
      type: expect.any(String),
      nodeId: expect.any(String),
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      payload: expect.any(Object),
    });

    const end = await t.app.inject({ method: 'GET', url: `/v1/workflows/${id}/events?after=100000` });
    expect(end.json()).toEqual({ items: [], nextAfter: 100000 });

    const bad = await t.app.inject({ method: 'GET', url: `/v1/workflows/${id}/events?limit=1001` });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().details[0].path).toBe('querystring.limit');
  });
});
