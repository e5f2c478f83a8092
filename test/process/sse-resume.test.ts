import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startServer, stopAllServers, tempDir } from '../support/server-process.js';
import { type SseEvent, SseParser } from '../support/sse-parser.js';

/**
 * docs/design.md#events-spans-metrics-and-rewards: a client reading a workflow's SSE stream drops mid-run and
 * reconnects with
 * Last-Event-ID; together the two connections deliver every event exactly once, in seq order,
 * ending with workflowEnd, the same list as the JSON events endpoint.
 */

const STEPS = 6;
const LATENCY_MS = 150;

interface EventView {
  seq: number;
  type: string;
  nodeId: string | null;
  at: string;
  payload: Record<string, unknown>;
}

interface StreamResult {
  status: number;
  contentType: string | null;
  parser: SseParser;
  /** True when the server ended the stream (rather than the client aborting it). */
  ended: boolean;
}

/**
 * Opens the SSE stream and reads until `stopAfter` events were parsed (then aborts the request, as
 * a dropped client would) or until the server ends the stream.
 */
async function readStream(
  server: ServerProcess,
  workflowId: string,
  options: { lastEventId?: string; stopAfter?: number; timeoutMs?: number } = {},
): Promise<StreamResult> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error('stream read timed out')), options.timeoutMs ?? 10_000);
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
  const parser = new SseParser();
  try {
    const res = await fetch(`${server.url}/v1/workflows/${workflowId}/events`, { headers, signal: controller.signal });
    const result: StreamResult = {
      status: res.status,
      contentType: res.headers.get('content-type'),
      parser,
      ended: false,
    };
    if (!res.body) return result;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        parser.push(decoder.decode());
        result.ended = true;
        return result;
      }
      parser.push(decoder.decode(value, { stream: true }));
      if (options.stopAfter !== undefined && parser.events.length >= options.stopAfter) {
        controller.abort(new Error('client drops the connection'));
        await reader.cancel().catch(() => undefined);
        return result;
      }
    }
  } finally {
    clearTimeout(timer);
  }
}

async function jsonEvents(server: ServerProcess, workflowId: string): Promise<EventView[]> {
  const all: EventView[] = [];
  let after = 0;
  for (;;) {
    const res = await fetch(`${server.url}/v1/workflows/${workflowId}/events?after=${after}&limit=1000`);
    expect(res.status).toBe(200);
    const page = (await res.json()) as { items: EventView[]; nextAfter: number };
    all.push(...page.items);
    if (page.items.length < 1000) return all;
    after = page.nextAfter;
  }
}

function toView(event: SseEvent): EventView {
  return JSON.parse(event.data) as EventView;
}

let server: ServerProcess;
const tmp = tempDir('baton-sse-');

beforeAll(async () => {
  server = await startServer({ dbPath: tmp.dbPath(), env: { SSE_KEEPALIVE_MS: '100' } });
});
afterAll(async () => {
  await stopAllServers();
  tmp.cleanup();
});

describe('SSE events with Last-Event-ID resume', () => {
  it('delivers every event exactly once across a dropped connection and a resume', { timeout: 30_000 }, async () => {
    const submit = await fetch(`${server.url}/v1/workflows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'sse-resume',
        agents: { x: { model: 'sim/haiku', simulate: { latencyMs: LATENCY_MS } } },
        root: {
          type: 'sequence',
          name: 'main',
          steps: Array.from({ length: STEPS }, (_, i) => ({
            type: 'prompt',
            name: `s${i + 1}`,
            agent: 'x',
            user: `step ${i + 1}`,
          })),
        },
      }),
    });
    expect(submit.status).toBe(202);
    const { id } = (await submit.json()) as { id: string };

    // First connection: read a few events, then drop it while the workflow is still running.
    const first = await readStream(server, id, { stopAfter: 6 });
    expect(first.status).toBe(200);
    expect(first.contentType).toMatch(/^text\/event-stream/);
    expect(first.ended).toBe(false);
    const firstEvents = first.parser.events;
    expect(firstEvents.length).toBeGreaterThanOrEqual(6);
    expect(firstEvents.map((e) => e.event)).not.toContain('workflowEnd');
    const lastId = firstEvents.at(-1)?.id;
    expect(lastId).toMatch(/^\d+$/);
    const midRun = (await (await fetch(`${server.url}/v1/workflows/${id}`)).json()) as { status: string };
    expect(midRun.status).toBe('running');

    // Let some events happen while nobody listens, so the resume needs the backlog and live events.
    await new Promise((resolve) => setTimeout(resolve, LATENCY_MS * 2));

    // Second connection resumes after the last id seen and reads until the server ends the stream.
    const second = await readStream(server, id, { lastEventId: lastId! });
    expect(second.status).toBe(200);
    expect(second.ended).toBe(true);
    expect(second.parser.rest).toBe('');
    const secondEvents = second.parser.events;
    expect(secondEvents.length).toBeGreaterThan(0);
    expect(Number(secondEvents[0]?.id)).toBe(Number(lastId) + 1);
    // Keep-alive comments (every 100 ms here) are ignored by the parser, not taken as events.
    expect(first.parser.comments + second.parser.comments).toBeGreaterThan(0);

    const received = [...firstEvents, ...secondEvents];
    for (const event of received) {
      const view = toView(event);
      expect(event.id).toBe(String(view.seq));
      expect(event.event).toBe(view.type);
    }
    const seqs = received.map((e) => Number(e.id));
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1]!);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(received.at(-1)?.event).toBe('workflowEnd');

    // The union equals the JSON endpoint's full list (seq 1..n, each once).
    const all = await jsonEvents(server, id);
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: all.length }, (_, i) => i + 1));
    expect(received.map(toView)).toEqual(all);
    const types = all.map((e) => e.type);
    expect(types[0]).toBe('workflowStart');
    expect(types.at(-1)).toBe('workflowEnd');
    expect(types.filter((t) => t === 'agentPromptEnd')).toHaveLength(STEPS);
    expect(types.filter((t) => t === 'stepEnd')).toHaveLength(STEPS + 1);
    expect(all.at(-1)?.payload.status).toBe('completed');

    // On a finished workflow: resuming at the end closes at once with nothing; from 0 replays everything.
    const atEnd = await readStream(server, id, { lastEventId: String(all.length) });
    expect(atEnd.ended).toBe(true);
    expect(atEnd.parser.events).toEqual([]);
    const replay = await readStream(server, id, { lastEventId: '0' });
    expect(replay.ended).toBe(true);
    expect(replay.parser.events.map(toView)).toEqual(all);

    // A malformed Last-Event-ID is a 400, not a silently restarted stream.
    const bad = await fetch(`${server.url}/v1/workflows/${id}/events`, {
      headers: { accept: 'text/event-stream', 'last-event-id': 'abc' },
    });
    expect(bad.status).toBe(400);
  });
});
