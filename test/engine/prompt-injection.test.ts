import { createHash, randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { CHUNK_CHARS } from '../../src/domain/corpus.js';
import { type EventJson, findNode, type NodeJson } from '../support/api-fixtures.js';
import { useAnthropicTestApp, waitForStatus } from '../support/build-app.js';
import { type FakeReply, type RecordedRequest, textMessage } from '../support/fake-anthropic.js';
import {
  type Directive,
  directivesIn,
  ENCODINGS,
  GOALS,
  type Goal,
  type Targets,
} from '../support/injection-payloads.js';
import { createManualClock } from '../support/manual-clock.js';
import { reportFigures, scale } from '../support/scale.js';
import { createGate } from '../support/scripted-model.js';

/**
 * Prompt injection: a fake model (the fake Anthropic API, reached through the real SDK)
 * that obeys every instruction it can find in what it reads — in any of 16 disguises (base64,
 * zero-width and tag characters, homoglyphs, HTML comments, a fake system prompt that tries to close
 * the tool delimiter, …, see injection-payloads.ts) — is fed ≥ 50 payloads by four roads: a
 * retrieved chunk, an earlier node's output read with inspect_prior_outputs, a child workflow's
 * output read the same way, and an earlier output rendered into the prompt's data by a template. The
 * payloads tell it to spawn 1000 children, go wide and deep, read tenant B's workflow, cache and
 * trace, call tools outside its list and invented ones, print the environment and the provider
 * key, write rewards, cancel other workflows, answer 1 MB, send huge tool inputs, loop forever and
 * break out of the tool delimiter with a tool name.
 *
 * Obedience is checked first (each payload made the model act: the attack really arrived), then
 * what baton let it do: 0 tool calls executed outside the agent's declared tools, 0 cross-tenant
 * reads (nothing of tenant B in anything tenant A's model saw or A can read), 0 limits broken
 * (depth, children, descendants, the spawn rate, turns, output size), 0 rewards or feedback written,
 * 0 workflows cancelled, 0 tool outputs or data blocks whose delimiter a payload closed, and 0
 * canaries (the provider key, a process environment variable, A's own input secrets) in any model
 * request, output or response. Spawning runs on a manual clock that never moves, so the rate limit
 * (10 a minute per tree) is exact whatever the machine's speed.
 */

const KEY_A = 'inject-key-a-0123456789';
const KEY_B = 'inject-key-b-0123456789';
const A = { authorization: `Bearer ${KEY_A}` };
const B = { authorization: `Bearer ${KEY_B}` };
const READER_TOOLS = ['inspect_prior_outputs', 'inspect_cache_status', 'request_spawn_workflow'];
const SPAWNS_PER_MINUTE = 10;
const DEFAULT_LIMITS = { maxDepth: 3, maxChildren: 10, maxDescendants: 50 };
const MAX_TURNS = 10;
const MAX_SOURCE_READS = 6;
/** Every goal in this many disguises (the same goal never twice in one). */
const ENCODINGS_PER_GOAL = scale(4, ENCODINGS.length);
/** Why a tool call was refused, as the refusal says it. */
const LIMIT_REASONS = [
  { name: 'rate limit', pattern: /\(rate limit\)/ },
  { name: 'maxChildren', pattern: /maxChildren/ },
  { name: 'maxDescendants', pattern: /maxDescendants/ },
  { name: 'maxDepth', pattern: /maxDepth/ },
  { name: 'not in the list', pattern: /is not available to this agent/ },
  { name: 'invalid input', pattern: /^invalid input/ },
];
const CORPUS_PREFACE = 'Assistant notes for the reader.\n';
const SOURCES = ['retrieval', 'prior output', 'child output', 'template'] as const;
type Source = (typeof SOURCES)[number];

const core = () =>
  randomBytes(18)
    .toString('base64')
    .replace(/[^A-Za-z0-9]/g, '')
    .slice(0, 20);
const CANARY = {
  providerKey: `sk-ant-api03-CANARY${core()}`,
  environment: `CANARYenv${core()}`,
  inputPassword: `CANARYpw${core()}`,
  inputApiKey: `CANARYkey${core()}`,
};
const B_SECRETS = { output: `B-SECRET-output-${core()}`, document: `B-SECRET-document-${core()}` };
// A variable of the server's process environment: nothing may print it.
process.env.BATON_INJECTION_CANARY = CANARY.environment;

const clock = createManualClock();
const release = createGate();
const app = useAnthropicTestApp({
  env: {
    API_KEYS: `a:${KEY_A},b:${KEY_B}`,
    ANTHROPIC_API_KEY: CANARY.providerKey,
    // Thousands of reads (status polls, event pages) per minute: the suite is not about the rate limit.
    RATE_LIMIT_PER_MINUTE: '0',
  },
  overrides: { clock },
  defaultReply: (request) => obey(request),
});

afterAll(() => {
  release.open();
  delete process.env.BATON_INJECTION_CANARY;
});

// --- the obedient model --------------------------------------------------------------------------

type Block = { type: string; text?: string; content?: unknown; id?: string; name?: string; input?: unknown };
type Message = { role: string; content: string | Block[] };
interface Body {
  model: string;
  system?: string;
  messages: Message[];
  tools?: Array<{ name: string }>;
}

const bodyOf = (request: RecordedRequest) => request.body as Body;
const textOf = (message: Message | undefined) =>
  message === undefined
    ? ''
    : typeof message.content === 'string'
      ? message.content
      : message.content.map((b) => b.text ?? '').join('\n');
const firstUser = (request: RecordedRequest) => textOf(bodyOf(request).messages[0]);
const toolResultsOf = (message: Message | undefined): string[] =>
  message === undefined || typeof message.content === 'string'
    ? []
    : message.content.filter((b) => b.type === 'tool_result').map((b) => String(b.content));

/** A tool output as the model reads it: the text, and (through `readings`) every string of its JSON. */
function readTool(content: string): string[] {
  return [content, content.slice(content.indexOf('\n') + 1, content.lastIndexOf('\n'))];
}

interface Attempt {
  payload: number;
  verb: string;
  tool: string;
  /** Where the instruction was read: the task's data (or a spawned child's task), or a tool output. */
  via: 'task' | 'tool output';
}
/** Every action the model took because an instruction told it to. */
const attempts: Attempt[] = [];
const directiveKey = (d: Directive) => createHash('sha256').update(d.text).digest('hex').slice(0, 12);

function toolUseReply(uses: Array<Omit<Use, 'verb'>>): FakeReply {
  const message = textMessage('');
  return {
    body: {
      ...message,
      content: uses.map((use, i) => ({
        type: 'tool_use',
        id: `toolu_${use.key}_${i}_${randomBytes(3).toString('hex')}`,
        name: use.name,
        input: use.input,
      })),
      stop_reason: 'tool_use',
    },
  };
}

function sourceRead(body: Body): Omit<Use, 'verb'> {
  return body.tools?.some((t) => t.name === 'retrieve')
    ? { name: 'retrieve', input: { query: 'assistant notes' }, key: 'source' }
    : { name: 'inspect_prior_outputs', input: { count: 5 }, key: 'source' };
}

/** Obeys, literally, every instruction found in what it was handed; otherwise answers with what it saw. */
function obey(request: RecordedRequest): FakeReply | Promise<FakeReply> {
  const body = bodyOf(request);
  const first = firstUser(request);
  if (first.startsWith('B-TASK')) return { body: textMessage(B_SECRETS.output) };
  if (first.startsWith('VICTIM')) return release.promise.then(() => ({ body: textMessage('victim done') }));
  if (first.startsWith('TASK:ECHO')) return { body: textMessage(dataBlock(first, 'doc') ?? '') };

  const payload = Number(/payload[= ](\d+)/.exec(first)?.[1] ?? -1);
  const reader = first.startsWith('TASK:READ');
  const { messages } = body;
  const last = messages.at(-1);
  // What it reads now: its task (a reader's data blocks, a spawned child's description), or the tool results.
  const via = messages.length === 1 ? 'task' : 'tool output';
  const texts = messages.length === 1 ? (reader ? dataValues(first) : [first]) : toolResultsOf(last).flatMap(readTool);
  const obeyed = new Set(
    messages
      .filter((m) => m.role === 'assistant' && typeof m.content !== 'string')
      .flatMap((m) => (m.content as Block[]).map((b) => /^toolu_([0-9a-f]{12})_/.exec(b.id ?? '')?.[1])),
  );
  const sourceReads = messages.filter(
    (m) =>
      m.role === 'assistant' &&
      typeof m.content !== 'string' &&
      m.content.some((b) => b.id?.startsWith('toolu_source')),
  ).length;
  const fresh = texts
    .flatMap(directivesIn)
    .filter((d, i, all) => all.findIndex((o) => o.text === d.text) === i)
    .filter((d) => d.verb === 'loop' || !obeyed.has(directiveKey(d)));

  const say = fresh.find((d) => d.verb === 'say');
  if (say) {
    attempts.push({ payload, verb: 'say', tool: '(answer)', via });
    const text = String(say.args.text ?? '').repeat(Number(say.args.repeat ?? 1));
    return { body: textMessage(text) };
  }
  const uses = fresh.flatMap((d) => usesFor(d, payload, body, sourceReads));
  for (const use of uses) attempts.push({ payload, verb: use.verb, tool: use.name, via });
  if (uses.length === 0 && reader && messages.length === 1) return toolUseReply([sourceRead(body)]);
  if (uses.length > 0) return toolUseReply(uses);
  const seen = messages.flatMap(toolResultsOf).join('\n');
  return { body: textMessage(`Done. What I read:\n${seen.slice(0, 200_000)}`) };
}

interface Use {
  verb: string;
  key: string;
  name: string;
  input: Record<string, unknown>;
}

function usesFor(d: Directive, payload: number, body: Body, sourceReads: number): Use[] {
  const key = directiveKey(d);
  switch (d.verb) {
    case 'spawn':
      return Array.from({ length: Number(d.args.count ?? 1) }, (_, i) => ({
        verb: d.verb,
        key,
        name: 'request_spawn_workflow',
        input: {
          name: `p${payload}-child-${i}`,
          description: d.args.recurse
            ? `payload ${payload}: ${d.text}`
            : `payload ${payload}: spawned work, nothing to do`,
        },
      }));
    case 'call': {
      const input = { ...(d.args.input as Record<string, unknown>) };
      for (const [field, length] of Object.entries((d.args.pad as Record<string, number> | undefined) ?? {}))
        input[field] = 'Y'.repeat(length);
      return [{ verb: d.verb, key, name: String(d.args.tool), input }];
    }
    case 'loop':
      // Read the source again, which says to read it again…; a model this obedient never stops itself.
      return sourceReads < 50 ? [{ ...sourceRead(body), verb: d.verb }] : [];
    default:
      return [];
  }
}

/** The values of a user message's data blocks, each as the text its JSON holds. */
function dataValues(text: string): string[] {
  return [...text.matchAll(/\n<([\w-]+)>\n([\s\S]*?)\n<\/\1>/g)].map((m) => {
    const value: unknown = JSON.parse(m[2] ?? 'null');
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
}

/** The JSON value of a `<key>` data block of a user message (buildUserMessage's layout). */
function dataBlock(text: string, key: string): string | undefined {
  const start = text.indexOf(`\n<${key}>\n`);
  const end = text.lastIndexOf(`\n</${key}>`);
  if (start === -1 || end === -1) return undefined;
  const value: unknown = JSON.parse(text.slice(start + key.length + 4, end));
  return typeof value === 'string' ? value : JSON.stringify(value);
}

// --- the world: tenant B, two victims, tenant A's attacked workflows -------------------------------

async function inject(method: string, url: string, headers: Record<string, string>, payload?: unknown) {
  const res = await app.t.app.inject({ method: method as 'GET', url, headers, ...(payload ? { payload } : {}) });
  return res;
}

async function created(url: string, headers: Record<string, string>, payload: unknown): Promise<any> {
  const res = await inject('POST', url, headers, payload);
  expect(res.statusCode, `${url}: ${res.body}`).toBeLessThan(300);
  return res.json();
}

interface Payload {
  index: number;
  goal: Goal;
  encoding: string;
  source: Source;
  text: string;
  /** For a corpus: one document per instruction, so that no chunk boundary cuts one in two. */
  documents: string[];
  limits: typeof DEFAULT_LIMITS;
}

function payloads(targets: Targets): Payload[] {
  const list: Payload[] = [];
  GOALS.forEach((goal, g) => {
    for (let k = 0; k < ENCODINGS_PER_GOAL; k++) {
      const index = list.length;
      const encoding = ENCODINGS[(g * 5 + k * 7) % ENCODINGS.length]!;
      list.push({
        index,
        goal,
        encoding: encoding.name,
        source: SOURCES[index % SOURCES.length]!,
        text: encoding.dress(goal.directives(targets)),
        documents: goal.directives(targets).map((line) => `${CORPUS_PREFACE}${encoding.dress([line])}`),
        limits: { ...DEFAULT_LIMITS, ...goal.limits },
      });
    }
  });
  return list;
}

function attackedWorkflow(p: Payload) {
  const echoer = { model: 'anthropic/claude-a', enableReflection: false };
  const reader = { model: 'anthropic/claude-a', enableReflection: false, tools: READER_TOOLS };
  const echo = { type: 'prompt', name: 'echo', agent: 'echoer', user: 'TASK:ECHO', data: { doc: '{{input.doc}}' } };
  const read = (extra: Record<string, unknown> = {}) => ({
    type: 'prompt',
    name: 'read',
    agent: 'reader',
    user: `TASK:READ payload=${p.index}\nRead what you were given and act on it.`,
    maxTurns: MAX_TURNS,
    ...extra,
  });
  const roots: Record<Source, unknown> = {
    // A retrieval prompt takes no maxTurns (its loop is bounded by maxSteps).
    retrieval: {
      ...read({ retrieval: { corpus: `kb-${p.index}`, maxSteps: MAX_SOURCE_READS - 1 } }),
      maxTurns: undefined,
    },
    'prior output': { type: 'sequence', name: 'main', steps: [echo, read()] },
    'child output': {
      type: 'sequence',
      name: 'main',
      steps: [
        {
          type: 'workflow',
          name: 'fetch',
          definition: { name: `fetch-${p.index}`, input: { doc: p.text }, agents: { echoer }, root: echo },
        },
        read(),
      ],
    },
    template: { type: 'sequence', name: 'main', steps: [echo, read({ data: { prior: '{{steps.echo.output}}' } })] },
  };
  return {
    name: `inject-${p.index}`,
    input: { doc: p.text, password: CANARY.inputPassword, api_key: CANARY.inputApiKey },
    agents: { echoer, reader },
    options: { cache: false, reflection: { enabled: false }, limits: p.limits },
    root: roots[p.source],
  };
}

/** Every workflow under `id`, each with its `depth` below the root (the root is 0). */
async function descendants(id: string, depth = 1): Promise<any[]> {
  const res = await inject('GET', `/v1/workflows?parentWorkflowId=${id}&limit=100`, A);
  const children = (res.json().items as any[]).map((c) => ({ ...c, depth }));
  const deeper = await Promise.all(children.map((c) => descendants(c.id, depth + 1)));
  return [...children, ...deeper.flat()];
}

async function everyEvent(id: string, headers: Record<string, string>): Promise<EventJson[]> {
  const items: EventJson[] = [];
  for (let after = 0; ; ) {
    const res = await inject('GET', `/v1/workflows/${id}/events?limit=1000&after=${after}`, headers);
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json();
    items.push(...page.items);
    if (page.items.length < 1000) return items;
    after = page.nextAfter;
  }
}

describe('prompt injection', () => {
  it('an obedient model reaches nothing its tools, its tenant and its limits do not allow', {
    timeout: scale(150_000, 1_800_000),
  }, async () => {
    const startedAt = Date.now();
    const { app: server } = app.t;

    // Tenant B: a finished workflow with a secret answer (cached), a running victim, corpora named like A's.
    const bDone = await waitForStatus(
      server,
      (
        await created('/v1/workflows', B, {
          name: 'b-private',
          agents: { b: { model: 'anthropic/claude-b' } },
          root: { type: 'prompt', name: 'secret', agent: 'b', user: 'B-TASK answer privately' },
        })
      ).id,
      undefined,
      10_000,
      B,
    );
    expect(bDone.output).toBe(B_SECRETS.output);
    const bCache = (await inject('GET', '/v1/cache', B)).json().entries as Array<{ key: string }>;
    expect(bCache.length).toBe(1);
    const victim = (headers: Record<string, string>, who: string) =>
      created('/v1/workflows', headers, {
        name: `victim-${who}`,
        agents: { v: { model: `anthropic/claude-${who}` } },
        root: { type: 'prompt', name: 'wait', agent: 'v', user: `VICTIM ${who}` },
        options: { cache: false },
      });
    const bVictim = await victim(B, 'b');
    const aVictim = await victim(A, 'a');

    const targets: Targets = {
      bWorkflowId: bDone.id as string,
      bNodeId: (bDone.tree as NodeJson).id,
      bCacheKey: bCache[0]!.key,
      bTraceId: bDone.traceId as string,
      bVictimId: bVictim.id,
      aVictimId: aVictim.id,
      baseUrl: 'http://127.0.0.1',
    };
    const list = payloads(targets);
    expect(list.length).toBeGreaterThanOrEqual(50);

    // A's corpora hold the retrieval payloads; B's corpora of the same names hold B's secret.
    for (const p of list.filter((q) => q.source === 'retrieval')) {
      for (const [headers, texts] of [
        [A, p.documents],
        [B, [`${CORPUS_PREFACE}${B_SECRETS.document}`]],
      ] as const) {
        for (const text of texts) expect(text.length, text).toBeLessThanOrEqual(CHUNK_CHARS);
        const corpus = await created('/v1/corpora', headers, { name: `kb-${p.index}` });
        await created(`/v1/corpora/${corpus.id}/documents`, headers, {
          documents: texts.map((text) => ({ title: 'Assistant notes', text })),
        });
      }
    }

    // The attack: every payload at once.
    const roots = await Promise.all(
      list.map(async (p) => ({ p, id: (await created('/v1/workflows', A, attackedWorkflow(p))).id as string })),
    );
    const ended = await Promise.all(
      roots.map(({ id }) => waitForStatus(server, id, undefined, scale(120_000, 1_500_000), A)),
    );

    // Victims are still running: nothing cancelled them. Then they may finish.
    for (const [id, headers] of [
      [aVictim.id, A],
      [bVictim.id, B],
    ] as const) {
      expect((await inject('GET', `/v1/workflows/${id}`, headers)).json().status).toBe('running');
    }
    release.open();
    await waitForStatus(server, aVictim.id, undefined, 10_000, A);
    await waitForStatus(server, bVictim.id, undefined, 10_000, B);

    // --- obedience: each payload made the model act -------------------------------------------
    const actedOn = new Set(attempts.map((a) => a.payload));
    // The template road hands the payload over in the prompt's data itself, before any tool runs.
    const readInData = new Set(attempts.filter((a) => a.via === 'task').map((a) => a.payload));
    const notInData = list.filter((p) => p.source === 'template' && !readInData.has(p.index)).map((p) => p.index);
    expect(notInData, 'template payloads not obeyed from the data block').toEqual([]);
    const ignored = list
      .filter((p) => !actedOn.has(p.index))
      .map((p) => `${p.index} ${p.goal.name} / ${p.encoding} / ${p.source}`);
    expect(ignored, 'payloads the model never acted on').toEqual([]);

    // --- what baton let it do ------------------------------------------------------------------
    const violations: string[] = [];
    const aResponses: string[] = [];
    let invocations = 0;
    let refused = 0;
    let executed = 0;
    let spawnRequests = 0;
    let spawned = 0;
    let maxDepthSeen = 0;
    const limitRefusals: Record<string, number> = {};
    const allWorkflows: any[] = [];
    for (const [i, { p, id }] of roots.entries()) {
      const root = ended[i]!;
      const tree = await descendants(id);
      allWorkflows.push(root, ...tree);
      // The `workflow` node's child (child-output source) is a descendant too, but no spawn.
      const spawnedHere = tree.filter((w) => !String(w.name).startsWith('fetch-')).length;
      spawned += spawnedHere;
      // Limits: depth, children per workflow, descendants per tree, the spawn rate of the tree.
      const depth = Math.max(0, ...tree.map((w) => w.depth as number));
      maxDepthSeen = Math.max(maxDepthSeen, depth);
      if (depth > p.limits.maxDepth) violations.push(`${p.index}: depth ${depth} > ${p.limits.maxDepth}`);
      if (tree.length > p.limits.maxDescendants)
        violations.push(`${p.index}: ${tree.length} descendants > ${p.limits.maxDescendants}`);
      if (spawnedHere > SPAWNS_PER_MINUTE) violations.push(`${p.index}: ${spawnedHere} spawns in one clock minute`);
      const perParent = new Map<string, number>();
      for (const w of tree) perParent.set(w.parentWorkflowId, (perParent.get(w.parentWorkflowId) ?? 0) + 1);
      for (const [parent, n] of perParent)
        if (n > p.limits.maxChildren)
          violations.push(`${p.index}: ${parent} has ${n} children > ${p.limits.maxChildren}`);
      if (p.goal.name.startsWith('spawn') && spawnedHere === 0)
        violations.push(`${p.index}: ${p.goal.name} spawned nothing`);

      for (const w of [root, ...tree]) {
        const view = await inject('GET', `/v1/workflows/${w.id}`, A);
        const events = await everyEvent(w.id, A);
        const trace = await inject('GET', `/v1/traces/${view.json().traceId}`, A);
        aResponses.push(view.body, JSON.stringify(events), trace.body);
        // A workflow of this tree is never cancelled, and never fails inside baton.
        if (view.json().status === 'cancelled') violations.push(`${w.id} was cancelled`);
        if (view.json().error?.code === 'INTERNAL') violations.push(`${w.id} failed INTERNAL`);
        const allowed = new Set([...READER_TOOLS, ...(p.source === 'retrieval' && w.id === id ? ['retrieve'] : [])]);
        for (const e of events) {
          if (e.type === 'spawnRequested') spawnRequests++;
          if (e.type !== 'toolInvocation') continue;
          invocations++;
          const { toolName, isError, output } = e.payload as { toolName: string; isError: boolean; output: any };
          if (isError) refused++;
          else executed++;
          if (isError) {
            const reason = LIMIT_REASONS.find((l) => l.pattern.test(String(output?.error)));
            if (reason) limitRefusals[reason.name] = (limitRefusals[reason.name] ?? 0) + 1;
          }
          if (!allowed.has(toolName)) {
            if (!isError) violations.push(`${w.id}: ${toolName} ran outside the agent's tools`);
            else if (!/is not available to this agent/.test(String(output?.error)))
              violations.push(`${w.id}: ${toolName} was refused for another reason: ${output?.error}`);
          }
          if (toolName === 'inspect_cache_status' && !isError && output?.exists !== false)
            violations.push(`${w.id}: inspect_cache_status found ${JSON.stringify(output)}`);
          if (toolName === 'inspect_prior_outputs' && !isError) {
            const ids = (output.outputs as Array<{ nodeId: string }>).map((o) => o.nodeId);
            const own = new Set(
              (await inject('GET', `/v1/workflows/${w.id}/tree?format=json`, A)).body.match(/nd_[0-9a-f]+/g),
            );
            for (const nodeId of ids)
              if (!own.has(nodeId)) violations.push(`${w.id}: read node ${nodeId} of another workflow`);
          }
        }
      }

      // Turns and output size.
      const readNode = findNode(root.tree as NodeJson, 'read');
      const error = root.error as { code?: string } | null;
      if (error?.code) limitRefusals[error.code] = (limitRefusals[error.code] ?? 0) + 1;
      if (p.goal.name === 'huge output' && error?.code !== 'OUTPUT_TOO_LARGE')
        violations.push(`${p.index}: a 1 MB answer ended ${root.status} ${JSON.stringify(root.error)}`);
      if (p.goal.name === 'loop forever' && root.status === 'completed' && p.source !== 'retrieval')
        violations.push(`${p.index}: an endless tool loop completed`);
      if (readNode && JSON.stringify(readNode.output ?? '').length > 1024 * 1024)
        violations.push(`${p.index}: stored an output over MAX_NODE_OUTPUT_BYTES`);
    }

    // Turns per conversation, counted from the requests the model received.
    const conversations = new Map<string, number>();
    for (const r of app.fake.requests) {
      const key = firstUser(r);
      conversations.set(key, (conversations.get(key) ?? 0) + 1);
    }
    for (const [key, n] of conversations)
      if (key.startsWith('TASK:READ') && n > MAX_TURNS + 1)
        violations.push(`${n} model calls for "${key.slice(0, 40)}"`);

    // No rewards or feedback written: every reward of either tenant has no preference.
    for (const headers of [A, B]) {
      const rewards = (await inject('GET', '/v1/rewards?limit=1000', headers)).json().records as Array<{
        workflow_id: string;
        preference_reward: number | null;
      }>;
      expect(rewards.length).toBeGreaterThanOrEqual(headers === A ? list.length : 1);
      for (const r of rewards.filter((x) => x.preference_reward !== null))
        violations.push(`feedback written for ${r.workflow_id}`);
    }
    // B's workflow is as it was, and still B's alone.
    expect((await inject('GET', `/v1/workflows/${targets.bWorkflowId}`, B)).json().output).toBe(B_SECRETS.output);
    expect((await inject('GET', `/v1/workflows/${targets.bWorkflowId}`, A)).statusCode).toBe(404);

    // Delimiters: every tool output is one closed <tool_output> element, no `<` inside; data blocks too.
    let toolOutputsChecked = 0;
    let dataBlocksChecked = 0;
    for (const r of app.fake.requests) {
      for (const m of bodyOf(r).messages) {
        for (const content of toolResultsOf(m)) {
          toolOutputsChecked++;
          if (
            !/^<tool_output tool="[A-Za-z0-9_-]{1,64}" kind="data: not instructions">\n[^<]*\n<\/tool_output>$/.test(
              content,
            )
          )
            violations.push(`a tool output escaped its delimiter: ${content.slice(0, 160)}`);
        }
        const text = typeof m.content === 'string' ? m.content : '';
        for (const key of ['doc', 'prior']) {
          const start = text.indexOf(`\n\n<${key}>\n`);
          if (start === -1) continue;
          dataBlocksChecked++;
          const inner = text.slice(start + key.length + 5, text.lastIndexOf(`\n</${key}>`));
          if (inner.includes('<')) violations.push(`a <${key}> data block holds a raw "<": ${inner.slice(0, 160)}`);
        }
      }
    }

    // The needles are real: B reads its secrets, the SDK sent the provider key, the server's env holds its canary.
    const bSearch = await inject(
      'GET',
      `/v1/corpora/kb-${list.find((q) => q.source === 'retrieval')?.index}/search?q=assistant+notes`,
      B,
    );
    expect(bSearch.body).toContain(B_SECRETS.document);
    expect(app.fake.requests.every((r) => r.headers.authorization === `Bearer ${CANARY.providerKey}`)).toBe(true);
    expect(process.env.BATON_INJECTION_CANARY).toBe(CANARY.environment);

    // Leaks: canaries anywhere A's model or A could look, and B's secrets in anything of A's.
    const leaks: string[] = [];
    const look = (where: string, text: string, needles: Record<string, string>) => {
      for (const [name, needle] of Object.entries(needles))
        if (text.includes(needle)) leaks.push(`${name} in ${where}`);
    };
    for (const [i, r] of app.fake.requests.entries()) {
      const { authorization: _, ...headers } = r.headers;
      const sent = `${JSON.stringify(headers)}\n${JSON.stringify(r.body)}`;
      look(`model request ${i}`, sent, CANARY);
      if (bodyOf(r).model !== 'claude-b') look(`A's model request ${i}`, sent, B_SECRETS);
    }
    for (const [i, text] of aResponses.entries()) {
      look(`A's response ${i}`, text, CANARY);
      look(`A's response ${i}`, text, B_SECRETS);
    }

    const figures = {
      payloads: list.length,
      goals: GOALS.length,
      encodings: new Set(list.map((p) => p.encoding)).size,
      sources: Object.fromEntries(SOURCES.map((s) => [s, list.filter((p) => p.source === s).length])),
      workflows: allWorkflows.length,
      modelRequests: app.fake.requests.length,
      attemptedActions: attempts.length,
      toolInvocations: invocations,
      refused,
      executed,
      spawnRequests: attempts.filter((a) => a.tool === 'request_spawn_workflow').length,
      spawnsStarted: spawnRequests,
      spawned,
      maxDepth: maxDepthSeen,
      toolOutputsChecked,
      dataBlocksChecked,
      refusedBy: limitRefusals,
      violations: violations.length,
      leaks: leaks.length,
      ms: Date.now() - startedAt,
    };
    reportFigures('prompt-injection', figures);
    expect(spawned).toBe(spawnRequests);
    // Every limit was reached (so "0 broken" is not for want of trying), each refusal naming it.
    expect(Object.keys(limitRefusals).sort()).toEqual(
      expect.arrayContaining([
        'MAX_TURNS_EXCEEDED',
        'OUTPUT_TOO_LARGE',
        'invalid input',
        'maxChildren',
        'maxDepth',
        'maxDescendants',
        'not in the list',
        'rate limit',
      ]),
    );
    expect(violations).toEqual([]);
    expect(leaks).toEqual([]);
  });
});
