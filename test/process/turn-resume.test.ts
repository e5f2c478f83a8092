import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { type RecordedRequest, textMessage, toolUseMessage } from '../support/fake-anthropic.js';
import { fakeAnthropicSuite } from '../support/fake-anthropic-suite.js';
import { callIdentity, conversationLength, getWorkflow, TERMINAL } from '../support/process-calls.js';
import { errorRecords, startServer, waitFor } from '../support/server-process.js';

/**
 * A tool loop commits each completed turn (the assistant message, its tool calls
 * and their results) and a resumed node starts at the first uncommitted turn; a replayed spawn is
 * matched by node, turn and call index, not by its words. The real server is SIGKILLed at a moment
 * the test picks from what it has observed (a held provider reply, the events the store published),
 * restarted on the same SQLite file, and the fake Anthropic API's request log is counted. The cache
 * is off, so nothing but the turn commits can spare a request.
 */

const MODEL = 'anthropic/claude-sonnet-5-5';
const RUN = Math.random().toString(36).slice(2, 8);
/** Provider calls of the tool loop: 8 tool turns, then the final answer. */
const LOOP_CALLS = 9;
const KILL_AFTER_TURN = 5;

/** The server life sending requests now (1-based). */
let life = 1;
const log: Array<{ life: number; identity: string; turn: number; request: RecordedRequest }> = [];

/** A conversation of n messages asks for turn (n + 1) / 2: every completed turn adds two messages. */
const turnOf = (request: RecordedRequest) => (conversationLength(request) + 1) / 2;

function loopReply(turn: number) {
  // Life 1 holds the call after the turn the test kills at: it is in flight at the kill.
  if (life === 1 && turn === KILL_AFTER_TURN + 1) return { hang: true };
  if (turn < LOOP_CALLS) return { body: toolUseMessage('inspect_current_node', {}) };
  return { body: textMessage(`loop done after ${turn} calls`) };
}

function spawnReply(identity: string, tag: string, turn: number) {
  if (identity.endsWith(' child')) return life === 1 ? { hang: true } : { body: textMessage('child done') };
  if (turn === 1) {
    // The words change with every life: a replayed spawn asks for "the same" child differently.
    return {
      body: toolUseMessage('request_spawn_workflow', {
        name: 'child',
        description: `${tag} child\nasked in life ${life}`,
      }),
    };
  }
  return life === 1 ? { hang: true } : { body: textMessage('spawner done') };
}

const suite = fakeAnthropicSuite('baton-turn-resume-', {
  defaultReply: (request) => {
    const identity = callIdentity(request);
    const [tag = '?', node = '?'] = identity.split(' ');
    const turn = turnOf(request);
    log.push({ life, identity, turn, request });
    return node === 'loop' ? loopReply(turn) : spawnReply(identity, tag, turn);
  },
  stopServersAfterEach: true,
});

async function submit(url: string, definition: unknown): Promise<string> {
  const res = await fetch(`${url}/v1/workflows`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(definition),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { id: string }).id;
}

async function eventsOf(url: string, id: string): Promise<Array<{ type: string; payload: Record<string, unknown> }>> {
  const res = await fetch(`${url}/v1/workflows/${id}/events?limit=1000`);
  return ((await res.json()) as { items: Array<{ type: string; payload: Record<string, unknown> }> }).items;
}

const messagesOf = (request: RecordedRequest) => (request.body as { messages: unknown[] }).messages;

describe('a crash resumes a tool loop at its first uncommitted turn', () => {
  it(`a ${LOOP_CALLS}-call tool loop killed after turn ${KILL_AFTER_TURN}: one repeated request, resumed at turn ${KILL_AFTER_TURN + 1}`, {
    timeout: 180_000,
  }, async () => {
    life = 1;
    const dbPath = suite.tmp.dbPath('loop.db');
    const tag = `loop-${RUN}`;
    const first = await startServer({ dbPath, env: suite.env(), startTimeoutMs: 60_000 });
    const id = await submit(first.url, {
      name: 'turn-resume-loop',
      input: { tag },
      options: { cache: false },
      agents: { scout: { model: MODEL, tools: ['inspect_current_node'] } },
      root: { type: 'prompt', name: 'loop', agent: 'scout', user: '{{input.tag}} loop', maxTurns: 12 },
    });
    // Turn 6 is asked (and held), and turn 5's tool result is in the published events.
    await waitFor('turn 6 in flight', () => log.some((c) => c.life === 1 && c.turn === KILL_AFTER_TURN + 1), 20_000);
    await waitFor(
      `${KILL_AFTER_TURN} tool invocations published`,
      async () => (await eventsOf(first.url, id)).filter((e) => e.type === 'toolInvocation').length >= KILL_AFTER_TURN,
      5_000,
    );
    first.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const lifeOne = log.filter((c) => c.life === 1);
    expect(lifeOne.map((c) => c.turn)).toEqual([1, 2, 3, 4, 5, 6]);

    life = 2;
    const second = await startServer({ dbPath, env: suite.env(), startTimeoutMs: 60_000 });
    const view = await waitFor(
      'the loop terminal',
      async () => {
        const w = await getWorkflow(second, id);
        return TERMINAL.has(w.status) ? w : undefined;
      },
      30_000,
      50,
    );
    expect(view.status).toBe('completed');
    expect(view.output).toBe(`loop done after ${LOOP_CALLS} calls`);
    const lifeTwo = log.filter((c) => c.life === 2);
    // The resumed node asks turn 6 (the call in flight at the kill) and goes on: turns 1–5 come
    // from their commits, not from the provider.
    expect(lifeTwo.map((c) => c.turn)).toEqual([6, 7, 8, 9]);
    const repeated = lifeTwo.filter((c) => lifeOne.some((o) => o.turn === c.turn)).length;
    expect(repeated).toBeLessThanOrEqual(1);
    // The conversation rebuilt from the commits is the one the dead process sent.
    const heldInLifeOne = lifeOne.find((c) => c.turn === KILL_AFTER_TURN + 1);
    expect(messagesOf(lifeTwo[0]?.request as RecordedRequest)).toEqual(
      messagesOf(heldInLifeOne?.request as RecordedRequest),
    );
    expect(view.tree.attempts).toBe(2);
    const turnEnds = (await eventsOf(second.url, id)).filter((e) => e.type === 'turnEnd');
    expect(turnEnds.map((e) => e.payload.turn)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    second.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
    expect(errorRecords(second)).toEqual([]);
  });

  it('a spawn replayed with other words after a kill between its commit and its turn’s finds its child', {
    timeout: 180_000,
  }, async () => {
    life = 1;
    const dbPath = suite.tmp.dbPath('spawn.db');
    const tag = `spawn-${RUN}`;
    const first = await startServer({ dbPath, env: suite.env(), startTimeoutMs: 60_000 });
    const id = await submit(first.url, {
      name: 'turn-resume-spawn',
      input: { tag },
      options: { cache: false },
      agents: { spawner: { model: MODEL, tools: ['request_spawn_workflow'] } },
      root: { type: 'prompt', name: 'spawn', agent: 'spawner', user: '{{input.tag}} spawn' },
    });
    await waitFor(
      'the spawner’s turn 2 and the child in flight',
      () =>
        log.some((c) => c.life === 1 && c.identity === `${tag} spawn` && c.turn === 2) &&
        log.some((c) => c.life === 1 && c.identity === `${tag} child`),
      20_000,
    );
    first.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');

    // The kill lands after the spawn's commit and before its turn's: the store loses the turn's
    // commit and everything the parent committed after it (what a kill in between leaves).
    const db = new Database(dbPath);
    const turnRow = db
      .prepare(
        `SELECT min(j.seq) FROM journal j, json_each(j.events) e
         WHERE j.workflow_id = ? AND e.value ->> '$[3]' = 'turnEnd'`,
      )
      .pluck()
      .get(id) as number | null;
    if (turnRow !== null) {
      const spawnRow = db
        .prepare(
          `SELECT max(j.seq) FROM journal j, json_each(j.events) e
           WHERE j.workflow_id = ? AND e.value ->> '$[3]' = 'spawnRequested'`,
        )
        .pluck()
        .get(id) as number;
      expect(spawnRow).toBeLessThan(turnRow);
      db.prepare('DELETE FROM journal WHERE workflow_id = ? AND seq >= ?').run(id, turnRow);
      db.prepare('DELETE FROM tool_calls WHERE workflow_id = ?').run(id);
    }
    db.close();

    life = 2;
    const second = await startServer({ dbPath, env: suite.env(), startTimeoutMs: 60_000 });
    const view = await waitFor(
      'the spawner terminal',
      async () => {
        const w = await getWorkflow(second, id);
        return TERMINAL.has(w.status) ? w : undefined;
      },
      30_000,
      50,
    );
    expect(view.status).toBe('completed');
    // The replayed turn asked for the child in other words, and found the one it had.
    const replayed = log.filter((c) => c.life === 2 && c.identity === `${tag} spawn`).map((c) => c.turn);
    expect(replayed).toEqual([1, 2]);
    const check = new Database(dbPath, { readonly: true });
    const children = check.prepare('SELECT id, status FROM workflows WHERE parent_workflow_id = ?').all(id) as Array<{
      id: string;
      status: string;
    }>;
    check.close();
    expect(children).toHaveLength(1);
    expect(children[0]?.status).toBe('completed');
    second.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
    expect(errorRecords(second)).toEqual([]);
  });
});
