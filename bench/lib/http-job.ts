/**
 * Shared by bench/http-steps.ts and bench/profile-http.ts: the 10-step job, the servers under test
 * (each a child process on 127.0.0.1:0), the black-box client (POST, SSE until workflowEnd, GET) and
 * the server-side measurements (CPU from /proc, WAL frames from the servers' own counters).
 *
 * All three servers speak one protocol, baton's: `POST /v1/workflows` → 202 `{ id }`;
 * `GET /v1/workflows/{id}/events` with `accept: text/event-stream` → SSE frames until a
 * `workflowEnd` frame, then the server ends the response; `GET /v1/workflows/{id}` → `{ status }`.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { ConfigSchema } from '../../src/config.js';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const STEPS = 10;
export const IN_FLIGHT = 16;
export const PEER_DIR = fileURLToPath(new URL('../peers/langgraph/', import.meta.url));

// ── the job ──

/** ~1 KB of prose: the text every step's prompt carries. */
export const TEXT = (() => {
  const sentences = [
    'The service receives a workflow definition over HTTP, validates it, and commits it before answering.',
    'Each step calls a model with a prompt built from the input, parses the JSON answer and records it.',
    'Events describing every step are streamed to the client while the run makes progress.',
    'A crash in the middle of a run loses nothing that was committed: the run resumes at the next start.',
    'Operators read metrics, traces and efficiency records to decide which model to route a task to.',
  ];
  let text = '';
  for (let i = 0; text.length < 1000; i++) text += `${sentences[i % sentences.length]} `;
  return text.trim();
})();

/** The responseFormat of every step; baton's sim provider answers with its `default`s and `const`s. */
export const RESPONSE_FORMAT = {
  type: 'object',
  required: ['summary', 'sentiment', 'topics', 'confidence', 'language'],
  additionalProperties: false,
  properties: {
    summary: {
      type: 'string',
      default: 'A durable service runs each step, commits its result and streams the events.',
    },
    sentiment: { type: 'string', enum: ['neutral', 'positive', 'negative'] },
    topics: { type: 'array', items: { type: 'string' }, default: ['workflows', 'durability', 'sqlite', 'streams'] },
    confidence: { type: 'number', minimum: 0, maximum: 1, default: 0.87 },
    language: { type: 'string', const: 'en' },
  },
} as const;

/** What a valid answer to RESPONSE_FORMAT is (the same bytes baton's sim provider produces). */
export const ANSWER = {
  summary: RESPONSE_FORMAT.properties.summary.default,
  sentiment: RESPONSE_FORMAT.properties.sentiment.enum[0],
  topics: RESPONSE_FORMAT.properties.topics.default,
  confidence: RESPONSE_FORMAT.properties.confidence.default,
  language: RESPONSE_FORMAT.properties.language.const,
};
export const ANSWER_JSON = JSON.stringify(ANSWER);
export const SYSTEM = 'You summarise the text you are given and answer with JSON only.';

export const userText = (step: number): string =>
  `Step ${step} of ${STEPS}: summarise the text below for an operator.\n\n${TEXT}`;

/** baton's definition: a sequence of 10 prompts on sim at zero latency, cache off. The same body goes to every server. */
export const DEFINITION = {
  name: 'bench-http-steps',
  input: { text: TEXT },
  agents: { writer: { model: 'sim/haiku', system: SYSTEM } },
  options: { cache: false },
  root: {
    type: 'sequence',
    name: 'main',
    steps: Array.from({ length: STEPS }, (_, i) => ({
      type: 'prompt',
      name: `step-${i + 1}`,
      agent: 'writer',
      user: userText(i + 1).replace(TEXT, '{{input.text}}'),
      responseFormat: RESPONSE_FORMAT,
    })),
  },
};
export const BODY = JSON.stringify(DEFINITION);

// ── servers ──

export type TargetName = 'baton' | 'langgraph' | 'harness';

export interface Server {
  name: TargetName;
  url: string;
  pid: number;
  proc: ChildProcess;
  logs: string[];
  /** WAL frames appended so far, from the server itself; undefined when it cannot tell. */
  walFrames?: () => Promise<number>;
  stop(): Promise<void>;
}

/** The parent's environment minus every variable baton reads (and LangSmith's), so the host leaks no config in. */
function cleanEnv(): Record<string, string> {
  const configKeys = new Set(Object.keys(ConfigSchema.shape));
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || configKeys.has(key) || /^(LANGCHAIN|LANGSMITH|LANGGRAPH)_/.test(key)) continue;
    env[key] = value;
  }
  return env;
}

export const peerInstalled = (): boolean =>
  existsSync(`${PEER_DIR}node_modules/@langchain/langgraph/package.json`) &&
  existsSync(`${PEER_DIR}node_modules/@langchain/langgraph-checkpoint-sqlite/package.json`);

export interface StartOptions {
  /** A fresh directory for the server's database. */
  dir: string;
  /** Extra node flags (e.g. --cpu-prof). */
  nodeArgs?: string[];
  /** Extra environment, merged over the server's own (e.g. baton's DATABASE_URL for PostgreSQL). */
  env?: Record<string, string>;
}

/**
 * Starts one server as `node [nodeArgs] --import tsx <entry>` with PORT=0 and resolves once it answers
 * `GET /healthz`. The port is read off /proc (the one TCP socket in LISTEN state the process holds),
 * so the servers need not log at info level. baton runs as `npm start` would run it (src/main.ts,
 * default config) with a temporary DATABASE_PATH, LOG_LEVEL=warn and RATE_LIMIT_PER_MINUTE=0 (the
 * default budget of 6000 requests a minute would answer 429 long before the bench ends: a job is
 * three requests); `options.env` is merged over all of that.
 */
export async function startServer(name: TargetName, options: StartOptions): Promise<Server> {
  const entries: Record<TargetName, string> = {
    baton: 'src/main.ts',
    langgraph: 'bench/peers/langgraph/server.ts',
    harness: 'bench/lib/harness-server.ts',
  };
  const env: Record<string, string> = { ...cleanEnv(), PORT: '0' };
  if (name === 'baton') {
    Object.assign(env, { DATABASE_PATH: `${options.dir}/baton.db`, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0' });
  } else {
    Object.assign(env, { BENCH_DB_DIR: options.dir, BENCH_ANSWER_JSON: ANSWER_JSON, BENCH_STEPS: String(STEPS) });
  }
  Object.assign(env, options.env);
  const proc = spawn(process.execPath, [...(options.nodeArgs ?? []), '--import', 'tsx', entries[name]], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pid = proc.pid;
  if (pid === undefined) throw new Error(`could not spawn ${name}`);
  const logs: string[] = [];
  const collect = (stream: NodeJS.ReadableStream | null): void => {
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      if (logs.length < 1000) logs.push(...chunk.split('\n').filter((line) => line !== ''));
    });
  };
  collect(proc.stdout);
  collect(proc.stderr);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const hasExited = () => proc.exitCode !== null || proc.signalCode !== null;

  let url: string | undefined;
  const deadline = Date.now() + 30_000;
  while (url === undefined) {
    if (hasExited() || Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`${name} ${hasExited() ? 'exited' : 'is not listening after 30 s'}:\n${logs.join('\n')}`);
    }
    await sleep(50);
    const [port, ...others] = listeningPorts(pid);
    if (port === undefined) continue;
    if (others.length > 0) throw new Error(`${name} listens on several ports: ${[port, ...others].join(', ')}`);
    const health = await get(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
    if (health?.status === 200) url = `http://127.0.0.1:${port}`;
  }
  const base = url;
  const server: Server = {
    name,
    url: base,
    pid,
    proc,
    logs,
    async stop() {
      if (hasExited()) return;
      proc.kill('SIGTERM');
      const timeout = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timeout);
    },
  };
  if (name === 'baton') server.walFrames = async () => batonWalFrames(base);
  if (name === 'langgraph') {
    server.walFrames = async () => {
      const stats = JSON.parse((await get(`${base}/stats`)).body) as { walFrames: number };
      return stats.walFrames;
    };
  }
  return server;
}

/** TCP ports in LISTEN state on sockets that `pid` holds open (from /proc/<pid>/fd and /proc/net/tcp{,6}). */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (match?.[1]) inodes.add(match[1]);
      } catch {
        // closed meanwhile
      }
    }
  } catch {
    return [];
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const [local, state, inode] = [fields[1], fields[3], fields[9]];
      if (state === '0A' && inode !== undefined && inodes.has(inode) && local !== undefined) {
        ports.add(Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16));
      }
    }
  }
  return [...ports];
}

async function batonWalFrames(url: string): Promise<number> {
  const { status, body } = await get(`${url}/metrics`);
  if (status !== 200) throw new Error(`GET /metrics answered ${status}`);
  const line = body.split('\n').find((l) => l.startsWith('baton_sqlite_wal_frames_total '));
  if (line === undefined) throw new Error('GET /metrics has no baton_sqlite_wal_frames_total');
  return Number(line.slice(line.indexOf(' ') + 1));
}

// ── CPU of a process tree, from /proc ──

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime, stime, cutime, cstime (fields 14–17 of /proc/<pid>/stat), in clock ticks; 0 once the process is gone. */
function statTicks(pid: number): { own: number; reaped: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const n = (i: number) => Number(fields[i] ?? 0);
    return { own: n(11) + n(12), reaped: n(13) + n(14) };
  } catch {
    return { own: 0, reaped: 0 };
  }
}

/** Direct children of every thread of `pid` (Linux's /proc/<pid>/task/<tid>/children). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const text = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
        if (text !== '') for (const child of text.split(' ')) out.push(Number(child));
      } catch {
        // thread gone
      }
    }
  } catch {
    // process gone
  }
  return out;
}

/**
 * CPU time (user + system, every thread) of a process and of its descendants, live or reaped, in µs.
 * /proc counts in clock ticks (10 ms at CLK_TCK 100): measured phases last long enough for that.
 */
export function treeCpuUs(rootPid: number): number {
  let ticks = 0;
  const seen = new Set<number>();
  const visit = (pid: number, root: boolean): void => {
    if (seen.has(pid)) return;
    seen.add(pid);
    const t = statTicks(pid);
    ticks += t.own + (root ? t.reaped : 0);
    for (const child of childrenOf(pid)) visit(child, false);
  };
  visit(rootPid, true);
  return (ticks * 1_000_000) / CLOCK_TICKS;
}

/** The command lines of a process's descendants: reported so that a helper process would not go unnoticed. */
export function descendants(rootPid: number): string[] {
  const out: string[] = [];
  const seen = new Set<number>([rootPid]);
  const visit = (pid: number): void => {
    for (const child of childrenOf(pid)) {
      if (seen.has(child)) continue;
      seen.add(child);
      try {
        out.push(readFileSync(`/proc/${child}/cmdline`, 'utf8').replace(/\0/g, ' ').trim());
      } catch {
        out.push(`pid ${child}`);
      }
      visit(child);
    }
  };
  visit(rootPid);
  return out;
}

// ── the client ──

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

interface Answer {
  status: number;
  body: string;
}

function send(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

export const get = (url: string): Promise<Answer> => send(url, 'GET', {});
export const postJson = (url: string, body: string): Promise<Answer> =>
  send(url, 'POST', { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }, body);

/** The event types of an SSE body, and the last workflowEnd's data. */
function parseSse(text: string): { types: string[]; end: unknown } {
  const types: string[] = [];
  let end: unknown;
  for (const frame of text.split('\n\n')) {
    let type = '';
    let data = '';
    for (const line of frame.split('\n')) {
      if (line.startsWith('event: ')) type = line.slice(7);
      else if (line.startsWith('data: ')) data += line.slice(6);
    }
    if (type === '') continue;
    types.push(type);
    if (type === 'workflowEnd') end = JSON.parse(data);
  }
  return { types, end };
}

export interface JobResult {
  /** From sending the POST to the end of the event stream (after workflowEnd). */
  wallMs: number;
  events: number;
}

/** One job, black-box: POST, follow the events until workflowEnd, then one confirming GET. */
export async function runJob(server: Server): Promise<JobResult> {
  const start = performance.now();
  const posted = await send(
    `${server.url}/v1/workflows`,
    'POST',
    { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(BODY)) },
    BODY,
  );
  if (posted.status !== 202) throw new Error(`${server.name}: POST answered ${posted.status}: ${posted.body}`);
  const { id } = JSON.parse(posted.body) as { id: string };
  const stream = await send(`${server.url}/v1/workflows/${id}/events`, 'GET', { accept: 'text/event-stream' });
  const wallMs = performance.now() - start;
  if (stream.status !== 200) throw new Error(`${server.name}: GET events answered ${stream.status}: ${stream.body}`);
  const { types, end } = parseSse(stream.body);
  const endStatus = (end as { payload?: { status?: unknown } } | undefined)?.payload?.status;
  if (endStatus !== 'completed') {
    throw new Error(`${server.name}: ${id} ended ${String(endStatus)}: ${stream.body.slice(-2000)}`);
  }
  const steps = server.name === 'baton' ? types.filter((t) => t === 'agentPromptEnd').length : types.length - 1;
  if (steps !== STEPS) throw new Error(`${server.name}: ${id} streamed ${steps} steps: ${types.join(',')}`);
  const final = await get(`${server.url}/v1/workflows/${id}`);
  const view = JSON.parse(final.body) as { status?: unknown; output?: unknown };
  if (final.status !== 200 || view.status !== 'completed') {
    throw new Error(`${server.name}: GET ${id} answered ${final.status}: ${final.body.slice(0, 2000)}`);
  }
  if (server.name !== 'harness' && JSON.stringify(view.output) !== ANSWER_JSON) {
    throw new Error(`${server.name}: ${id} output ${JSON.stringify(view.output)}, expected ${ANSWER_JSON}`);
  }
  return { wallMs, events: types.length };
}

/** `count` jobs with `inFlight` of them running at any time; resolves with each job's result. */
export async function runJobs(server: Server, count: number, inFlight: number): Promise<JobResult[]> {
  const results: JobResult[] = [];
  let started = 0;
  await Promise.all(
    Array.from({ length: Math.min(inFlight, count) }, async () => {
      while (started < count) {
        started++;
        results.push(await runJob(server));
      }
    }),
  );
  return results;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The server's WAL frame counter once it has caught up: both servers count at their 200 ms
 * checkpoint, so two equal reads 250 ms apart mean every committed frame is in the figure.
 */
export async function settledWalFrames(server: Server): Promise<number | null> {
  if (!server.walFrames) return null;
  let last = await server.walFrames();
  for (let i = 0; i < 20; i++) {
    await sleep(250);
    const now = await server.walFrames();
    if (now === last) return now;
    last = now;
  }
  return last;
}
