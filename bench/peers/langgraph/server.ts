/**
 * The LangGraph.js peer of bench/http-steps.ts: the same 10-step job as a LangGraph `StateGraph`
 * behind a small node:http server that speaks baton's protocol (POST /v1/workflows → 202 { id };
 * GET /v1/workflows/{id}/events as SSE until a workflowEnd frame; GET /v1/workflows/{id}).
 *
 * The graph, as LangGraph's docs write one: a `StateSchema` (zod fields; `answers` a ReducedValue
 * appending each step's answer), 10 nodes chained (`addSequence`) START → step-1 → … → step-10 → END, each calling a
 * chat model (a subclass of @langchain/core's BaseChatModel answering the ~200 B JSON instantly) with
 * a system message and the ~1 KB prompt, parsing the JSON and returning it as a state update, which
 * LangGraph validates against the schema. Compiled with a SqliteSaver on a file in BENCH_DB_DIR;
 * each job is one thread (`thread_id` = the job id) run with `graph.stream(…, { streamMode: "updates",
 * durability: "sync" })`; every update is written to the SSE client as its node completes.
 *
 * What it persists (SqliteSaver): for each super-step a checkpoint row (the full channel values — the
 * input text and the answers so far — versions and metadata, serialised) in `checkpoints`, and each
 * node's pending writes in `writes`: 12 checkpoints (input, 10 steps, end) and 10 task writes per job,
 * in autocommit statements (writes in one transaction per task). `durability: "sync"` makes a step's
 * checkpoint durable before the next step starts, which is baton's guarantee (LangGraph's default,
 * "async", does the same writes without waiting for them). The job status and SSE backlog live in
 * memory, as an HTTP front of LangGraph would keep them; GET /v1/workflows/{id} reads the final state
 * back through `graph.getState`.
 *
 * SQLite as baton runs it: WAL, synchronous=NORMAL, and checkpoints of the WAL by a worker thread
 * (PASSIVE every 200 ms, wal_autocheckpoint=0 on the saver's connection) that also counts the WAL
 * frames appended, by the same rule as baton's checkpointer; GET /stats answers { walFrames }.
 */
import { createServer, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage, HumanMessage, SystemMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { END, ReducedValue, START, StateGraph, StateSchema } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import Database from 'better-sqlite3';
import { z } from 'zod';

const STEPS = Number(process.env.BENCH_STEPS ?? 10);
const ANSWER_JSON = process.env.BENCH_ANSWER_JSON ?? '{}';
const DB_PATH = join(process.env.BENCH_DB_DIR ?? '.', 'langgraph.db');
/** "sync" by default (see above); BENCH_PEER_DURABILITY=async measures LangGraph's default. */
const DURABILITY = process.env.BENCH_PEER_DURABILITY === 'async' ? 'async' : 'sync';
const SYSTEM = 'You summarise the text you are given and answer with JSON only.';

/** A chat model that answers every prompt with the same JSON, at once (as baton's sim provider does). */
class FakeJsonChatModel extends BaseChatModel {
  constructor(private readonly answer: string) {
    super({});
  }

  _llmType(): string {
    return 'fake-json';
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    let chars = 0;
    for (const message of messages) chars += message.text.length;
    const usage = {
      input_tokens: Math.ceil(chars / 4),
      output_tokens: Math.ceil(this.answer.length / 4),
      total_tokens: Math.ceil(chars / 4) + Math.ceil(this.answer.length / 4),
    };
    const message = new AIMessage({ content: this.answer, usage_metadata: usage });
    return { generations: [{ text: this.answer, message }], llmOutput: { tokenUsage: usage } };
  }
}

const Answer = z.object({
  summary: z.string(),
  sentiment: z.enum(['neutral', 'positive', 'negative']),
  topics: z.array(z.string()),
  confidence: z.number().min(0).max(1),
  language: z.literal('en'),
});
type AnswerValue = z.infer<typeof Answer>;

const JobState = new StateSchema({
  text: z.string(),
  answers: new ReducedValue(
    z.array(Answer).default(() => []),
    {
      inputSchema: Answer,
      reducer: (current: AnswerValue[], next: AnswerValue) => [...current, next],
    },
  ),
});

const model = new FakeJsonChatModel(ANSWER_JSON);

function step(i: number) {
  return async (state: typeof JobState.State) => {
    const reply = await model.invoke([
      new SystemMessage(SYSTEM),
      new HumanMessage(`Step ${i} of ${STEPS}: summarise the text below for an operator.\n\n${state.text}`),
    ]);
    return { answers: JSON.parse(reply.text) as AnswerValue };
  };
}

const db = new Database(DB_PATH);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('wal_autocheckpoint = 0');
const saver = new SqliteSaver(db);

const graph = new StateGraph(JobState)
  .addSequence(
    Array.from({ length: STEPS }, (_, i) => [`step-${i + 1}`, step(i + 1)] as [string, ReturnType<typeof step>]),
  )
  .addEdge(START, 'step-1')
  .addEdge(`step-${STEPS}`, END)
  .compile({ checkpointer: saver });

// ── the WAL checkpointer and frame counter (the same rule as baton's src/store/sqlite/checkpointer.ts) ──

const WORKER_SOURCE = `
const { openSync, readSync, closeSync } = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { timeout: 1000 });
const header = Buffer.alloc(32);
function walSalt() {
  let fd = -1;
  try {
    fd = openSync(workerData.path + '-wal', 'r');
    return readSync(fd, header, 0, 32, 0) === 32 ? header.toString('hex', 16, 24) : null;
  } catch {
    return null;
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}
let frames = 0;
let lastLog = 0;
let lastSalt = null;
setInterval(() => {
  const salt = walSalt();
  const log = db.pragma('wal_checkpoint(PASSIVE)')[0].log;
  if (log < 0) return;
  const appended = salt !== lastSalt || log < lastLog ? log : log - lastLog;
  lastLog = log;
  lastSalt = salt;
  if (appended > 0) {
    frames += appended;
    parentPort.postMessage(frames);
  }
}, 200);
`;
let walFrames = 0;
const worker = new Worker(WORKER_SOURCE, {
  eval: true,
  workerData: { driver: createRequire(import.meta.url).resolve('better-sqlite3'), path: DB_PATH },
});
worker.unref();
worker.on('message', (frames: number) => {
  walFrames = frames;
});

// ── jobs and the HTTP front ──

interface Job {
  status: 'running' | 'completed' | 'failed';
  /** SSE frames so far; dropped once the job is over and its final GET has been answered. */
  frames: string[];
  listeners: Set<ServerResponse>;
}

const jobs = new Map<string, Job>();
let counter = 0;

function emit(job: Job, type: string, data: unknown): void {
  const frame = `id: ${job.frames.length + 1}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
  job.frames.push(frame);
  for (const res of job.listeners) {
    res.write(frame);
    if (type === 'workflowEnd') res.end();
  }
  if (type === 'workflowEnd') job.listeners.clear();
}

async function run(id: string, job: Job, text: string): Promise<void> {
  const started = Date.now();
  try {
    const stream = await graph.stream(
      { text },
      { configurable: { thread_id: id }, streamMode: 'updates', durability: DURABILITY },
    );
    for await (const update of stream) {
      for (const [node, value] of Object.entries(update)) emit(job, 'stepEnd', { node, update: value });
    }
    job.status = 'completed';
  } catch (err) {
    job.status = 'failed';
    emit(job, 'error', { message: err instanceof Error ? err.message : String(err) });
  }
  emit(job, 'workflowEnd', { payload: { status: job.status, durationMs: Date.now() - started } });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const server = createServer((req, res) => {
  const url = req.url ?? '/';
  if (req.method === 'POST' && url === '/v1/workflows') {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { input?: { text?: unknown } };
      const text = body.input?.text;
      if (typeof text !== 'string') return json(res, 400, { message: 'input.text: expected a string' });
      const id = `job_${(++counter).toString(36)}`;
      const job: Job = { status: 'running', frames: [], listeners: new Set() };
      jobs.set(id, job);
      json(res, 202, { id, status: job.status });
      void run(id, job, text);
    });
    return;
  }
  const match = /^\/v1\/workflows\/([^/]+)(\/events)?$/.exec(url);
  const job = match?.[1] ? jobs.get(match[1]) : undefined;
  if (req.method === 'GET' && match?.[1] && match[2]) {
    if (!job) return json(res, 404, { message: 'no such job' });
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    for (const frame of job.frames) res.write(frame);
    if (job.status === 'running') {
      job.listeners.add(res);
      res.on('close', () => job.listeners.delete(res));
    } else res.end();
    return;
  }
  if (req.method === 'GET' && match?.[1]) {
    if (!job) return json(res, 404, { message: 'no such job' });
    const id = match[1];
    if (job.status === 'running') return json(res, 200, { id, status: job.status });
    void graph.getState({ configurable: { thread_id: id } }).then(
      (snapshot) => {
        const answers = (snapshot.values as { answers?: unknown[] }).answers ?? [];
        job.frames = [];
        json(res, 200, { id, status: job.status, steps: answers.length, output: answers[answers.length - 1] ?? null });
      },
      (err: unknown) => json(res, 500, { message: String(err) }),
    );
    return;
  }
  if (req.method === 'GET' && url === '/stats') return json(res, 200, { walFrames });
  if (req.method === 'GET' && url === '/healthz') return json(res, 200, { status: 'ok' });
  json(res, 404, { message: 'not found' });
});

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => {
  server.close(() => {
    db.close();
    process.exit(0);
  });
  server.closeAllConnections();
});
