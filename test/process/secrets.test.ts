import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unpackChunks } from '../../src/store/chunk-text.js';
import { type DatabaseUnderTest, databaseUnderTest } from '../support/database-under-test.js';
import {
  errorBody,
  type FakeServer,
  type RecordedRequest,
  startFakeAnthropic,
  textMessage,
} from '../support/fake-anthropic.js';
import { postgresBinDir } from '../support/postgres-cluster.js';
import { buildInventoriedApp, type RouteEntry } from '../support/route-inventory.js';
import { reportFigures } from '../support/scale.js';
import { type ServerProcess, startServer, stopAllServers, tempDir, waitFor } from '../support/server-process.js';

/**
 * Secrets: canary secrets enter baton through every door a secret really comes through —
 * the provider key (the real server's ANTHROPIC_API_KEY, sent by the real SDK), `password` /
 * `api_key` fields of inputs, a bearer token written in a prompt, a secret in a tool output (a
 * retrieved document), secrets a provider error echoes (the key it was called with), secrets the
 * model itself writes (answers, JSON answers, tool inputs, a spawned child's description), and the
 * free text of the other write routes (a registered agent's system prompt, feedback notes, corpus
 * descriptions and document metadata). The real server runs as a child process at LOG_LEVEL=trace,
 * so its logs are its real stdout/stderr. Then every canary is looked for — 0 occurrences allowed —
 * in every log line, every byte of every database file (`.db`, `-wal`, `-shm`) while it runs and
 * after shutdown has checkpointed (over PostgreSQL, in the `postgres` project: a full `pg_dump`), the decoded text of every corpus chunk (stored compressed, so
 * not in those bytes), every response of every GET route of the route inventory over
 * every object (SSE streams and traces included), every read-only tool explored over every node, and
 * every request the model received (only the `authorization` header carries the provider key).
 *
 * What "an occurrence" is: each canary has a random alphanumeric core; JSON escaping, URL encoding
 * and HTML escaping leave such a core unchanged, so a plain search covers them. The search is
 * case-insensitive (the FTS index keeps lowercased tokens), also looks for each half of the core
 * (a value split across two SQLite pages or WAL frames still shows one half whole), for the core in
 * UTF-16LE and hex, and for the whole canary in base64 / base64url at all three alignments.
 */

const LOG_LEVEL = 'trace';
const MODEL = 'anthropic/claude-sonnet-4-5';

interface Canary {
  value: string;
  core: string;
}

function canary(prefix: string): Canary {
  // Alphanumeric only, so no encoding (JSON, URL, HTML) can change the core.
  const core = randomBytes(18)
    .toString('base64')
    .replace(/[^A-Za-z0-9]/g, '')
    .padEnd(24, 'q')
    .slice(0, 24);
  return { value: `${prefix}CANARY${core}`, core };
}

const C = {
  providerKey: canary('sk-ant-api03-'),
  tenantKey: canary('baton-key-'),
  inputPassword: canary(''),
  inputApiKey: canary(''),
  inputNestedPassword: canary(''),
  inputBearer: canary(''),
  promptBearer: canary(''),
  promptPassword: canary(''),
  errorPassword: canary(''),
  errorBearer: canary(''),
  docApiKey: canary(''),
  docBearer: canary(''),
  docProviderKey: canary('sk-ant-api03-'),
  docMetadataKey: canary(''),
  corpusDescriptionToken: canary(''),
  modelToolInput: canary(''),
  spawnApiKey: canary(''),
  spawnBearer: canary(''),
  spawnName: canary('sk-ant-api03-'),
  modelAnswerPassword: canary(''),
  modelJsonKey: canary(''),
  agentSystemBearer: canary(''),
  agentUpdatePassword: canary(''),
  searchQueryPassword: canary(''),
  feedbackNotePassword: canary(''),
  approveNotePassword: canary(''),
  rejectReasonBearer: canary(''),
  simErrorPassword: canary(''),
  simPromptPassword: canary(''),
  simInputToken: canary(''),
};
type CanaryName = keyof typeof C;

const AUTH = { authorization: `Bearer ${C.tenantKey.value}` };

// --- the fake model ----------------------------------------------------------------------------

type Block = { type: string; text?: string; content?: unknown; name?: string };
type Message = { role: string; content: string | Block[] };

function messagesOf(request: RecordedRequest): Message[] {
  return (request.body as { messages?: Message[] }).messages ?? [];
}

function firstUserText(request: RecordedRequest): string {
  const first = messagesOf(request)[0];
  if (!first) return '';
  if (typeof first.content === 'string') return first.content;
  return first.content.map((b) => b.text ?? '').join('\n');
}

function toolResults(request: RecordedRequest): string[] {
  return messagesOf(request).flatMap((m) =>
    typeof m.content === 'string'
      ? []
      : m.content.filter((b) => b.type === 'tool_result').map((b) => JSON.stringify(b.content)),
  );
}

function toolUse(uses: Array<{ name: string; input: Record<string, unknown> }>) {
  const message = textMessage('');
  return {
    ...message,
    content: uses.map((use, i) => ({ type: 'tool_use', id: `toolu_canary_${i}`, ...use })),
    stop_reason: 'tool_use',
  };
}

/** The SDK sends the provider key as `authorization: Bearer <key>`. */
function providerKeyOf(request: RecordedRequest): string {
  return String(request.headers.authorization ?? '').replace(/^Bearer /, '');
}

/**
 * Answers by the first word of the conversation's first user message. Errors echo the key the SDK
 * sent; answers and tool inputs carry secrets of the model's own.
 */
function fakeModel(request: RecordedRequest) {
  const key = providerKeyOf(request);
  const user = firstUserText(request);
  const word = /^[A-Z0-9]+/.exec(user)?.[0] ?? '';
  switch (word) {
    case 'ERR400':
      return {
        status: 400,
        body: errorBody(
          'invalid_request_error',
          `request refused for key ${key}; the account password: ${C.errorPassword.value}`,
        ),
      };
    case 'ERR401':
      return {
        status: 401,
        body: errorBody(
          'authentication_error',
          `invalid x-api-key: ${key} (sent as Authorization: Bearer ${C.errorBearer.value})`,
        ),
      };
    case 'ERR500':
      return { status: 500, body: errorBody('api_error', `upstream failed while serving ${key}`) };
    case 'ECHO':
      return { body: textMessage(`You said: ${user}`) };
    case 'JSONOUT':
      return {
        body: textMessage(
          JSON.stringify({ summary: 'configured', api_key: C.modelJsonKey.value, endpoint: 'billing' }),
        ),
      };
    case 'AGENT': {
      const system = String((request.body as { system?: unknown }).system ?? '');
      return { body: textMessage(`My instructions were: ${system}`) };
    }
    case 'TOOLS': {
      const results = toolResults(request);
      if (results.length === 0) {
        return {
          body: toolUse([
            { name: 'inspect_prior_outputs', input: { count: 5 } },
            { name: 'retrieve', input: { query: 'vault credentials rotation' } },
            { name: 'inspect_current_node', input: { password: C.modelToolInput.value } },
            {
              name: 'request_spawn_workflow',
              input: {
                name: C.spawnName.value,
                description: `Rotate with api_key=${C.spawnApiKey.value} and Authorization: Bearer ${C.spawnBearer.value}`,
              },
            },
          ]),
        };
      }
      return {
        body: textMessage(
          `Tools said: ${results.join(' | ')}. I was called with ${key}. The password: ${C.modelAnswerPassword.value}`,
        ),
      };
    }
    default:
      // A spawned child: its user message is the description the model wrote.
      return { body: textMessage(`child saw: ${user}`) };
  }
}

// --- the scan --------------------------------------------------------------------------------

function base64Variants(value: string): string[] {
  const variants: string[] = [];
  const n = Buffer.byteLength(value);
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.from('x'.repeat(offset) + value).toString('base64');
    // Only the 4-character groups made of the canary's bytes alone.
    const first = Math.ceil(offset / 3);
    const last = Math.floor((offset + n) / 3) - 1;
    const stable = encoded.slice(first * 4, (last + 1) * 4);
    variants.push(stable, stable.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return variants;
}

interface Needle {
  canary: CanaryName;
  form: string;
  text: string;
  caseSensitive: boolean;
}

const NEEDLES: Needle[] = (Object.entries(C) as Array<[CanaryName, Canary]>).flatMap(([name, { value, core }]) => {
  const half = core.length / 2;
  const folded = (form: string, text: string): Needle => ({
    canary: name,
    form,
    text: text.toLowerCase(),
    caseSensitive: false,
  });
  return [
    folded('core', core),
    folded('first half', core.slice(0, half)),
    folded('second half', core.slice(half)),
    folded('utf-16le', core.split('').join('\0')),
    folded('hex', Buffer.from(core).toString('hex')),
    ...base64Variants(value).map((text): Needle => ({ canary: name, form: 'base64', text, caseSensitive: true })),
  ];
});

const leaks: string[] = [];
let bytesScanned = 0;
let placesScanned = 0;

function scan(where: string, content: string | Buffer): void {
  const text = typeof content === 'string' ? content : content.toString('latin1');
  const lower = text.toLowerCase();
  bytesScanned += text.length;
  placesScanned++;
  const found = new Map<CanaryName, string[]>();
  for (const needle of NEEDLES) {
    if (!(needle.caseSensitive ? text : lower).includes(needle.text)) continue;
    found.set(needle.canary, [...(found.get(needle.canary) ?? []), needle.form]);
  }
  for (const [name, forms] of found) leaks.push(`${name} (${forms.join(', ')}) in ${where}`);
}

function scanDatabaseFiles(dir: string, moment: string): number {
  const files = readdirSync(dir).filter((name) => name.startsWith('baton.db'));
  for (const name of files) scan(`${name} ${moment}`, readFileSync(join(dir, name)));
  return files.length;
}

/**
 * The database over PostgreSQL (the `postgres` project of vitest.config.ts): its files are the
 * cluster's, shared with other suites, so what is scanned is a full `pg_dump` of the service's
 * database — every row of every table, as text.
 */
function scanPostgresDump(url: string, moment: string): number {
  const dump = execFileSync(join(postgresBinDir(), 'pg_dump'), ['--no-owner', '--dbname', url], {
    maxBuffer: 512 * 1024 * 1024,
  });
  scan(`pg_dump ${moment}`, dump);
  return 1;
}

/** Which database the server runs on: SQLite, or PostgreSQL in the `postgres` project. */
const KIND = process.env.BATON_TEST_DATABASE === 'postgres' ? 'postgres' : 'sqlite';
let database: DatabaseUnderTest | undefined;

// --- HTTP ------------------------------------------------------------------------------------

let server: ServerProcess;
let fake: FakeServer;
const tmp = tempDir('baton-secrets-');
let responsesScanned = 0;

async function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; json: () => any }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...AUTH, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  scan(`${method} ${path} → ${res.status}`, `${JSON.stringify([...res.headers])}\n${text}`);
  responsesScanned++;
  return { status: res.status, text, json: () => JSON.parse(text) };
}

async function created(method: string, path: string, body: unknown): Promise<any> {
  const res = await call(method, path, body);
  expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
  return res.json();
}

async function submit(definition: Record<string, unknown>): Promise<string> {
  return (await created('POST', '/v1/workflows', definition)).id as string;
}

async function untilEnded(id: string): Promise<any> {
  return waitFor(
    `workflow ${id} to end`,
    async () => {
      const view = (await call('GET', `/v1/workflows/${id}`)).json();
      return ['completed', 'failed', 'cancelled'].includes(view.status) ? view : undefined;
    },
    20_000,
  );
}

/** Every item of a paged list route (`nextCursor`, or `next_cursor` on the snake_case lists). */
async function everyItem(path: string, field: string): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const res = await call('GET', cursor === null ? path : `${path}${sep}cursor=${encodeURIComponent(cursor)}`);
    expect(res.status, res.text).toBe(200);
    const page = res.json();
    items.push(...page[field]);
    cursor = page.nextCursor ?? page.next_cursor ?? null;
  } while (cursor !== null);
  return items;
}

interface NodeView {
  id: string;
  type: string;
  spawnedWorkflowId: string | null;
  children: NodeView[];
}
/** The nodes of the view's own workflow: a child workflow's nodes (declared or spawned) have their own view. */
const nodeIds = (node: NodeView): string[] => [
  node.id,
  ...node.children.filter((c) => c.spawnedWorkflowId === null && node.type !== 'workflow').flatMap(nodeIds),
];

// --- the workflows ---------------------------------------------------------------------------

function definitions(corpus: string, agent: string): Array<Record<string, unknown>> {
  const anthropic = { model: MODEL, enableReflection: false };
  const one = (name: string, user: string, extra: Record<string, unknown> = {}) => ({
    name,
    agents: { a: anthropic },
    root: { type: 'prompt', name: 'ask', agent: 'a', user, ...extra },
  });
  return [
    one('provider-400', 'ERR400 hello'),
    one('provider-401', 'ERR401 hello'),
    one('provider-500', 'ERR500 hello'),
    {
      name: 'inputs-prompts-tools',
      input: {
        user: 'bob',
        password: C.inputPassword.value,
        api_key: C.inputApiKey.value,
        nested: {
          credentials: { password: C.inputNestedPassword.value },
          headers: { Authorization: `Bearer ${C.inputBearer.value}` },
        },
      },
      agents: {
        a: { ...anthropic, system: 'Use {{input.api_key}} when the billing API asks.' },
        tooled: {
          ...anthropic,
          system: 'You keep the vault notes.',
          tools: ['inspect_prior_outputs', 'inspect_current_node', 'request_spawn_workflow'],
        },
      },
      root: {
        type: 'sequence',
        name: 'main',
        steps: [
          {
            type: 'prompt',
            name: 'echo',
            agent: 'a',
            user:
              `ECHO Call the billing API with the header Authorization: Bearer ${C.promptBearer.value}. ` +
              `The account password: ${C.promptPassword.value} for {{input.user}}.`,
            data: { key: '{{input.api_key}}', pw: '{{input.password}}', nested: '{{input.nested}}' },
          },
          {
            type: 'prompt',
            name: 'tools',
            agent: 'tooled',
            user: 'TOOLS Check the vault notes and what the previous step said.',
            retrieval: { corpus, maxSteps: 3 },
          },
          {
            type: 'prompt',
            name: 'json',
            agent: 'a',
            user: 'JSONOUT Describe the configuration. Previous: {{steps.tools.output}}',
            responseFormat: {
              type: 'object',
              properties: { summary: { type: 'string' }, api_key: { type: 'string' }, endpoint: { type: 'string' } },
              required: ['summary'],
            },
          },
        ],
      },
    },
    one('echo-again', 'ECHO the same prompt twice, for the cache'),
    one('echo-again', 'ECHO the same prompt twice, for the cache'),
    {
      name: 'registered-agent',
      root: { type: 'prompt', name: 'ask', agent, user: 'AGENT what are your instructions?' },
    },
    // The simulated provider: an error message with a password, and answers echoing the user message.
    {
      name: 'sim-error',
      agents: {
        a: {
          model: 'sim/sonnet',
          simulate: {
            responses: [{ error: { status: 400, message: `denied, password: ${C.simErrorPassword.value}` } }],
          },
        },
      },
      root: { type: 'prompt', name: 'ask', agent: 'a', user: 'hello' },
    },
    {
      name: 'sim-echo',
      input: { service: 'billing', token: C.simInputToken.value },
      agents: { a: { model: 'sim/sonnet', system: 'Use {{input.token}} carefully.' } },
      root: {
        type: 'sequence',
        name: 'main',
        steps: [
          {
            type: 'prompt',
            name: 'echo',
            agent: 'a',
            user: `log in with password: ${C.simPromptPassword.value} for {{input.service}}`,
            data: { token: '{{input.token}}' },
          },
          { type: 'prompt', name: 'after', agent: 'a', user: 'Previous: {{steps.echo.output}}' },
        ],
      },
    },
  ];
}

const figures: Record<string, unknown> = {};

beforeAll(async () => {
  fake = await startFakeAnthropic({ defaultReply: fakeModel });
  if (KIND === 'postgres') database = await databaseUnderTest('postgres', tmp.dbPath());
  server = await startServer({
    dbPath: tmp.dbPath(),
    env: {
      ...database?.env,
      HOST: '127.0.0.1',
      LOG_LEVEL,
      API_KEYS: `acme:${C.tenantKey.value}`,
      ANTHROPIC_API_KEY: C.providerKey.value,
      ANTHROPIC_BASE_URL: fake.url,
      RETRY_MAX_ATTEMPTS: '2',
      RETRY_BASE_DELAY_MS: '1',
    },
  });
});

afterAll(async () => {
  await stopAllServers();
  await fake?.close();
  await database?.close();
  tmp.cleanup();
});

describe('canary secrets', () => {
  it('appear 0 times in logs, database files, HTTP responses, SSE streams, spans and model requests', {
    timeout: 90_000,
  }, async () => {
    const startedAt = Date.now();

    // The free-text write routes, each with a secret.
    const corpus = await created('POST', '/v1/corpora', {
      name: 'vault',
      description: `Rotation notes; token=${C.corpusDescriptionToken.value}`,
    });
    await created('POST', `/v1/corpora/${corpus.id}/documents`, {
      documents: [
        {
          title: 'Vault credentials rotation',
          text:
            'Vault credentials rotation: the service reads api_key: ' +
            `${C.docApiKey.value} and sends Authorization: Bearer ${C.docBearer.value}; ` +
            `the old provider key was ${C.docProviderKey.value}.`,
          metadata: { owner: 'ops', api_key: C.docMetadataKey.value },
        },
        { title: 'Unrelated', text: 'Lunch is served at noon in the atrium on weekdays.' },
      ],
    });
    await created('POST', '/v1/agents', {
      name: 'notary',
      config: {
        model: MODEL,
        enableReflection: false,
        system: `You call the registry with Authorization: Bearer ${C.agentSystemBearer.value} and nothing else.`,
      },
    });

    await created('PUT', '/v1/agents/notary', {
      config: {
        model: MODEL,
        enableReflection: false,
        system: `You call the registry with password: ${C.agentUpdatePassword.value} and nothing else.`,
      },
    });
    // A secret in a query string: the request log line carries the URL.
    const search = await call(
      'GET',
      `/v1/corpora/vault/search?q=${encodeURIComponent(`vault password: ${C.searchQueryPassword.value}`)}`,
    );
    expect(search.status, search.text).toBe(200);

    // Two critical tasks wait at their human checkpoint: one approved with a note, one rejected with a reason.
    const critical = (name: string) => ({
      name,
      task: { type: 'migration', complexity: 'critical' },
      agents: { a: { model: MODEL, enableReflection: false } },
      root: { type: 'prompt', name: 'plan', agent: 'a', user: 'ECHO plan the migration' },
    });
    const approvedId = await submit(critical('approved-migration'));
    const rejectedId = await submit(critical('rejected-migration'));
    for (const [id, answer, body] of [
      [approvedId, 'approve', { note: `ok, the db password: ${C.approveNotePassword.value}` }],
      [rejectedId, 'reject', { reason: `use Authorization: Bearer ${C.rejectReasonBearer.value} instead` }],
    ] as const) {
      await waitFor(
        `${id} at its checkpoint`,
        async () => (await call('GET', `/v1/workflows/${id}`)).json().status === 'idle',
      );
      await created('POST', `/v1/workflows/${id}/${answer}`, body);
    }

    const ids: string[] = [approvedId, rejectedId];
    for (const definition of definitions('vault', 'notary')) ids.push(await submit(definition));
    const ended = [];
    for (const id of ids) ended.push(await untilEnded(id));
    const [approved, rejected, err400, err401, err500, tooled, , , registered, simError] = ended;
    expect(approved.status, JSON.stringify(approved)).toBe('completed');
    expect(rejected.error.code, JSON.stringify(rejected)).toBe('CHECKPOINT_REJECTED');

    // Each door was really used: the failures carry the provider's (redacted) words, the tools ran.
    for (const failed of [err400, err401, err500, simError])
      expect(failed.status, JSON.stringify(failed)).toBe('failed');
    expect(err400.error.message).toMatch(/request refused for key/);
    expect(err401.error.message).toMatch(/invalid x-api-key/);
    expect(tooled.status, JSON.stringify(tooled)).toBe('completed');
    expect(registered.status, JSON.stringify(registered)).toBe('completed');
    const events = (await call('GET', `/v1/workflows/${tooled.id}/events?limit=1000`)).json().items as Array<{
      type: string;
      payload: { toolName?: string; isError?: boolean; output?: unknown };
    }>;
    const invoked = events.filter((e) => e.type === 'toolInvocation');
    expect(invoked.map((e) => e.payload.toolName).sort()).toEqual([
      'inspect_current_node',
      'inspect_prior_outputs',
      'request_spawn_workflow',
      'retrieve',
    ]);
    expect(invoked.every((e) => e.payload.isError === false)).toBe(true);
    const retrieved = invoked.find((e) => e.payload.toolName === 'retrieve')?.payload.output as { count: number };
    expect(retrieved.count).toBeGreaterThan(0);
    expect(JSON.stringify(retrieved)).toContain('Bearer [REDACTED]');
    expect(fake.requests.length).toBeGreaterThan(ids.length);
    expect(fake.requests.map(providerKeyOf)).toEqual(fake.requests.map(() => C.providerKey.value));

    // Feedback with a note, on a finished workflow.
    await created('POST', `/v1/workflows/${tooled.id}/feedback`, {
      actions: ['commit'],
      note: `worked once I set password: ${C.feedbackNotePassword.value}`,
    });

    // Every object: workflows (spawned children included), traces, cache entries, corpora, agents.
    const workflows = await everyItem('/v1/workflows?limit=100', 'items');
    expect(workflows.length).toBeGreaterThan(ids.length);
    const views = [];
    for (const w of workflows) views.push(await untilEnded(w.id));
    // The spawned child ran, on the model's (redacted) description.
    const child = views.find((v) => v.parentWorkflowId === tooled.id);
    expect(child?.status, JSON.stringify(child)).toBe('completed');
    const childCall = fake.requests.find((r) => firstUserText(r).startsWith('Rotate with'));
    expect(firstUserText(childCall!)).toMatch(/api_key=\[REDACTED\].*Bearer \[REDACTED\]/);
    const cacheKeys = (await everyItem('/v1/cache', 'entries')).map((e) => e.key as string);
    expect(cacheKeys.length).toBeGreaterThan(0);
    const fillers: Record<string, string[]> = {
      '/v1/workflows/:id': views.map((v) => v.id),
      '/v1/traces/:traceId': views.map((v) => v.traceId),
      '/v1/cache/:key': cacheKeys.map(encodeURIComponent),
      '/v1/corpora/:id': [corpus.id, 'vault'],
      '/v1/agents/:name': ['notary'],
    };
    const queries: Record<string, string[]> = {
      '/v1/workflows': ['?limit=100'],
      '/v1/workflows/:id/tree': ['?format=json', '?format=text'],
      '/v1/workflows/:id/events': ['?limit=1000'],
      '/v1/corpora/:id/search': ['?q=vault+credentials+rotation', '?q=api_key+bearer+provider'],
      '/v1/traces': ['?limit=100'],
      '/v1/cache': [''],
    };

    const inventory = await buildInventoriedApp();
    const routes: RouteEntry[] = inventory.routes;
    await inventory.close();
    let getRoutes = 0;
    for (const route of routes.filter((r) => r.method === 'GET')) {
      if (route.url.includes('*')) continue;
      getRoutes++;
      for (const path of expand(route.url, fillers)) {
        for (const query of queries[route.url] ?? ['']) {
          const res = await call('GET', `${path}${query}`);
          expect(res.status, `GET ${path}${query}: ${res.text}`).toBe(200);
        }
      }
    }
    // SSE: each finished workflow's whole stream.
    for (const view of views) {
      const res = await call('GET', `/v1/workflows/${view.id}/events`, undefined, { accept: 'text/event-stream' });
      expect(res.text).toContain('workflowEnd');
    }
    // Every read-only tool explored as every node.
    const readOnlyTools: Array<[string, Record<string, unknown>]> = [
      ['inspect_current_node', {}],
      ['read_ancestor_chain', {}],
      ['list_siblings_children', { type: 'siblings' }],
      ['list_siblings_children', { type: 'children' }],
      ['inspect_prior_outputs', { count: 50 }],
      ...cacheKeys.map((key): [string, Record<string, unknown>] => ['inspect_cache_status', { promptHash: key }]),
    ];
    let explored = 0;
    for (const view of views) {
      for (const nodeId of nodeIds(view.tree)) {
        for (const [tool, input] of readOnlyTools) {
          const res = await call('POST', `/v1/workflows/${view.id}/nodes/${nodeId}/tools/${tool}`, input);
          expect(res.status, res.text).toBe(200);
          explored++;
        }
      }
    }

    // What the model received: everything but the one header the provider key belongs in, and but
    // the model's own earlier turns of the conversation (it wrote those secrets; baton hands them back).
    for (const [i, request] of fake.requests.entries()) {
      const { authorization: _, ...headers } = request.headers;
      const { messages = [], ...rest } = request.body as { messages?: Message[] };
      const sent = { ...rest, messages: messages.filter((m) => m.role !== 'assistant') };
      scan(`model request ${i}`, `${JSON.stringify(headers)}\n${JSON.stringify(sent)}`);
    }

    // The database while the server runs (recent pages in the WAL), then after shutdown's checkpoint.
    const scanStored = (moment: string) =>
      database === undefined
        ? scanDatabaseFiles(tmp.dir, moment)
        : scanPostgresDump(database.env.DATABASE_URL as string, moment);
    const liveFiles = scanStored('while running');
    server.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
    scanStored('after shutdown');
    // Chunk text is stored compressed (store/chunk-text.ts): the bytes of the file do not show it.
    let chunkTexts: Array<string | Buffer>;
    if (database === undefined) {
      const db = new Database(tmp.dbPath());
      db.pragma('wal_checkpoint(TRUNCATE)');
      chunkTexts = db.prepare<[], string | Buffer>('SELECT text FROM corpus_chunks').pluck().all();
      db.close();
      scanDatabaseFiles(tmp.dir, 'after a checkpoint');
    } else {
      const pool = new pg.Pool({ connectionString: database.env.DATABASE_URL, max: 1 });
      chunkTexts = (await pool.query<{ text: Buffer }>('SELECT text FROM corpus_chunks')).rows.map((r) => r.text);
      await pool.end();
    }
    expect(chunkTexts.length).toBeGreaterThan(0);
    scan('corpus chunks, decoded', unpackChunks(chunkTexts).join('\n'));
    scan('server logs', server.logs.join('\n'));
    expect(server.logs.length).toBeGreaterThan(50);

    Object.assign(figures, {
      canaries: Object.keys(C).length,
      needlesPerPlace: NEEDLES.length,
      workflows: views.length,
      modelRequests: fake.requests.length,
      getRoutes,
      httpResponses: responsesScanned,
      toolExplorations: explored,
      logLines: server.logs.length,
      dbFilesWhileRunning: liveFiles,
      placesScanned,
      mbScanned: Math.round((bytesScanned / 1e6) * 10) / 10,
      leaks: leaks.length,
      ms: Date.now() - startedAt,
    });
    reportFigures('secrets', figures);
    if (leaks.length > 0) console.log(`LEAKS\n${leaks.join('\n')}`);
    expect(leaks).toEqual([]);
  });
});

/** The concrete paths of a route pattern: each `:param` filled from the objects of its resource. */
function expand(url: string, fillers: Record<string, string[]>): string[] {
  if (!url.includes(':')) return [url];
  const prefix = Object.keys(fillers).find((pattern) => url === pattern || url.startsWith(`${pattern}/`));
  if (prefix === undefined) throw new Error(`no objects to fill ${url}: add them to the sweep`);
  const rest = url.slice(prefix.length);
  if (rest.includes(':')) throw new Error(`no objects to fill ${url}: add them to the sweep`);
  const param = prefix.slice(prefix.lastIndexOf(':'));
  return (fillers[prefix] ?? []).map((value) => prefix.replace(param, value) + rest);
}
