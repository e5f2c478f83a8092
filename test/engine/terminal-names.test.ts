import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { parseDefinition } from '../../src/store/workflow-rows.js';
import { allEvents, type EventJson } from '../support/api-fixtures.js';
import { useAnthropicTestApp, waitForStatus } from '../support/build-app.js';
import { type RecordedRequest, textMessage, toolUseMessage } from '../support/fake-anthropic.js';
import { BIDI, HOSTILE_NAME, ZERO_WIDTH } from '../support/hostile-text.js';

/**
 * Names a hostile model writes that reach a terminal or the store: a spawned
 * child's name must follow the API's own name rules (refused back to the model as a tool error,
 * never a workflow), and a tool name no tool can have (longer than 64 characters) or an over-long
 * tool_use id is a bad response — retried, never stored — so an 8 000 000-character name adds no
 * 72 MB and no 9 MB analytics answer.
 */

const dir = mkdtempSync(join(tmpdir(), 'baton-names-'));
const DATABASE_PATH = join(dir, 'names.db');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const app = useAnthropicTestApp({ env: { DATABASE_PATH, RETRY_BASE_DELAY_MS: '0' } });

/** Names that forge a tree line, move the cursor, end a C string or reverse what follows. */
const FORGING_NAMES = [
  'x [running]\n  \u2713 deploy-prod [approved]',
  'ok\r\u2713 deploy-prod [approved]',
  '\u001b[2K\u001b[1G\u2713 deploy-prod [approved]',
  '\u009b2K csi',
  'nul\u0000byte',
  'del\u007fete',
  BIDI.slice(0, 60),
  ZERO_WIDTH,
  HOSTILE_NAME,
  ' padded ',
];
const HUGE_NAME = `deploy_${'A'.repeat(8_000_000 - 7)}`;
/** A valid name that is a provider key: redaction must leave it a valid name, not `[REDACTED]`. */
const SECRET_NAME = 'sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_ab';

type Message = { role: string; content: string | Array<{ type: string; content?: string; text?: string }> };
const messagesOf = (request: RecordedRequest) => (request.body as { messages: Message[] }).messages;
const firstUser = (request: RecordedRequest) => {
  const first = messagesOf(request)[0];
  return typeof first?.content === 'string' ? first.content : '';
};

function toolUses(uses: Array<{ name: string; input: Record<string, unknown>; id?: string }>) {
  const message = toolUseMessage('inspect_current_node', {});
  message.content = uses.map((use, i) => ({ type: 'tool_use', id: use.id ?? `toolu_names_${i}`, ...use }));
  return { body: message };
}

/** The hostile model: what it answers depends on the task in the first user message and the turn. */
const answeredOnce = new Set<string>();
function hostile(request: RecordedRequest) {
  const task = firstUser(request);
  const turn = messagesOf(request).length;
  if (task === 'spawned work') return { body: textMessage('child done') };
  if (task === 'spawn forged names') {
    if (turn > 1) return { body: textMessage('done') };
    return toolUses([
      ...FORGING_NAMES.map((name) => ({
        name: 'request_spawn_workflow',
        input: { name, description: 'spawned work' },
      })),
      { name: 'request_spawn_workflow', input: { name: 'helper-1', description: 'spawned work' } },
    ]);
  }
  // Once hostile, then sane: the retried call gets a usable answer.
  if (task.startsWith('invent once') && !answeredOnce.has(task)) {
    answeredOnce.add(task);
    return task.endsWith('id')
      ? toolUses([{ name: 'inspect_current_node', input: {}, id: `toolu_${'9'.repeat(1_000_000)}` }])
      : toolUses([{ name: HUGE_NAME, input: {} }]);
  }
  if (task === 'invent always') return toolUses([{ name: HUGE_NAME, input: {} }]);
  if (task === 'spawn a secret name') {
    if (turn > 1) return { body: textMessage('done') };
    return toolUses([{ name: 'request_spawn_workflow', input: { name: SECRET_NAME, description: 'spawned work' } }]);
  }
  return { body: textMessage('done') };
}

async function run(user: string, tools: string[] = []) {
  const res = await app.t.app.inject({
    method: 'POST',
    url: '/v1/workflows',
    payload: {
      name: 'hostile-names',
      agents: { a: { model: 'anthropic/claude-names', tools } },
      root: { type: 'prompt', name: 'p', agent: 'a', user },
    },
  });
  expect(res.statusCode, res.body).toBe(202);
  const id = (res.json() as { id: string }).id;
  const done = await waitForStatus(app.t.app, id, undefined, 30_000);
  return { id, done, events: await allEvents(app.t.app, id) };
}

const get = async (url: string) => {
  const res = await app.t.app.inject({ method: 'GET', url });
  expect(res.statusCode, res.body.slice(0, 500)).toBe(200);
  return res.body;
};
const diskBytes = () =>
  ['', '-wal'].reduce((sum, suffix) => {
    try {
      return sum + statSync(`${DATABASE_PATH}${suffix}`).size;
    } catch {
      return sum;
    }
  }, 0);

describe('names a hostile model writes', () => {
  it('a spawned name that breaks the API name rules is a tool error the model reads, never a child', async () => {
    app.fake.setDefault(hostile);
    const { id, done, events } = await run('spawn forged names', ['request_spawn_workflow']);
    expect(done.status).toBe('completed');

    const list = JSON.parse(await get('/v1/workflows?limit=100')) as {
      items: Array<{ name: string; parentWorkflowId: string | null }>;
    };
    const children = list.items.filter((w) => w.parentWorkflowId === id);
    expect(children.map((w) => w.name)).toEqual(['helper-1']);

    const spawns = events.filter((e) => e.type === 'toolInvocation');
    expect(spawns).toHaveLength(FORGING_NAMES.length + 1);
    const refused = spawns.filter((e) => e.payload.isError === true);
    expect(refused).toHaveLength(FORGING_NAMES.length);
    for (const event of refused) {
      expect(JSON.stringify(event.payload.output)).toContain('letters, digits, spaces');
    }
    // The model read why, in the tool results of its next turn.
    const second = app.fake.requests.find((r) => firstUser(r) === 'spawn forged names' && messagesOf(r).length > 1);
    expect(JSON.stringify(second?.body)).toContain('must be 1-100 letters, digits, spaces');
  });

  it('a spawned name holding a secret is stored redacted and still a valid name (it reads back after a restart)', async () => {
    app.fake.setDefault(hostile);
    const { id, done } = await run('spawn a secret name', ['request_spawn_workflow']);
    expect(done.status).toBe('completed');
    // The stored definition, as a restarted store reads it: without the definition cache.
    const db = new Database(DATABASE_PATH, { readonly: true });
    try {
      const texts = db
        .prepare<[string], string>('SELECT definition FROM workflows WHERE parent_workflow_id = ?')
        .pluck()
        .all(id);
      expect(texts).toHaveLength(1);
      const definition = parseDefinition(texts[0] as string);
      expect(definition.name).not.toContain('AbCdEfGh');
      expect(definition.name).toContain('REDACTED');
    } finally {
      db.close();
    }
  });

  it('an 8 000 000-character tool name is a bad response: retried, stored nowhere, analytics stay small', async () => {
    app.fake.setDefault(hostile);
    const before = diskBytes();
    const { id, done, events } = await run('invent once name', ['inspect_current_node']);

    const stored = {
      events: JSON.stringify(events).length,
      trace: (await get(`/v1/traces/${String(done.traceId)}`)).length,
      tools: (await get('/v1/analytics/tools')).length,
      models: (await get('/v1/analytics/models')).length,
      dashboard: (await get('/v1/dashboard')).length,
      tree: (await get(`/v1/workflows/${id}/tree?format=text`)).length,
    };
    const grown = diskBytes() - before;
    console.info(`8 000 000-char tool name: disk +${grown} bytes, answers ${JSON.stringify(stored)}`);
    for (const [where, chars] of Object.entries(stored)) expect(chars, where).toBeLessThan(100_000);
    // The database and its WAL grow by what one small workflow writes, not by the name.
    expect(grown).toBeLessThan(2 * 1024 * 1024);
    expect(done.status).toBe('completed');
    const retry = events.find((e) => e.type === 'retry');
    expect(retry?.payload.code).toBe('LLM_BAD_RESPONSE');
    expect(String(retry?.payload.message).length).toBeLessThan(500);
    expect(events.filter((e) => e.type === 'toolInvocation')).toHaveLength(0);
  });

  it('a model that keeps inventing it fails the node with LLM_BAD_RESPONSE and a short message', async () => {
    app.fake.setDefault(hostile);
    const { done, events } = await run('invent always', ['inspect_current_node']);
    expect(done.status).toBe('failed');
    const error = done.error as { code: string; message: string };
    expect(error.code).toBe('LLM_BAD_RESPONSE');
    expect(error.message).toContain('64');
    expect(error.message.length).toBeLessThan(500);
    expect(JSON.stringify(events).length).toBeLessThan(100_000);
    expect((await get('/v1/analytics/tools')).length).toBeLessThan(100_000);
  });

  it('a 1 000 000-character tool_use id is a bad response too: never carried back or stored', async () => {
    app.fake.setDefault(hostile);
    const { done, events } = await run('invent once id', ['inspect_current_node']);
    expect(done.status).toBe('completed');
    const retry = events.find((e: EventJson) => e.type === 'retry');
    expect(retry?.payload.code).toBe('LLM_BAD_RESPONSE');
    expect(JSON.stringify(events).length).toBeLessThan(100_000);
    const carried = app.fake.requests.filter((r) => JSON.stringify(r.body).includes('9'.repeat(1_000)));
    expect(carried).toHaveLength(0);
  });
});
