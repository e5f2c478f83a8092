import { afterAll, expect } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import { allEvents, type EventJson } from './api-fixtures.js';
import { type TestApp, useAnthropicTestApp, useOpenAiTestApp, waitForStatus } from './build-app.js';
import { errorBody, type FakeReply, type FakeServer, textMessage, toolUseMessage } from './fake-anthropic.js';
import { chatError, chatText, chatToolCall } from './fake-openai.js';
import { createManualClock, type ManualClock } from './manual-clock.js';
import { reportFigures } from './scale.js';

/**
 * The two providers the LLM fault suites run every row against: the fake Anthropic API through the
 * real SDK, and a fake OpenAI-compatible `/chat/completions` server through baton's adapter. Each
 * has its own app, on its own manual clock, with one concurrency slot (so a slot a failed call kept
 * would stop the next workflow) and a key the fakes echo back in every error text, so any leak of
 * it into what baton stores or answers shows.
 */
export const RETRY_ATTEMPTS = 4;
export const RETRY_BASE_DELAY_MS = 1000;

export interface FaultProvider {
  name: 'anthropic' | 'openai';
  app: { readonly fake: FakeServer; readonly t: TestApp };
  clock: ManualClock;
  model: string;
  /** The provider key baton was configured with: it must never appear in anything baton answers. */
  key: string;
  text(text: string): FakeReply;
  toolUse(name: string, input: unknown): FakeReply;
  /** A tool call whose input is `json`, sent as text: inputs too deep for JSON.stringify to write. */
  toolUseJson(name: string, json: string): FakeReply;
  /** An error answer in the provider's own envelope; its message quotes the key, as some servers do. */
  error(status: number, type: string, headers?: Record<string, string>): FakeReply;
  /** Clock times (manual clock, ms) at which the fake received each request of the current test. */
  readonly sentAt: number[];
  /** Every line the app logged (at debug level), since it started. */
  readonly logLines: string[];
}

/** A debug-level logger writing into `lines`: what an operator's log would hold. */
function capturingLogger(lines: string[]) {
  return createLogger({ level: 'debug', destination: { write: (line: string) => lines.push(line) } });
}

function env(key: string, keyVar: string): Record<string, string> {
  return {
    [keyVar]: key,
    CONCURRENCY: '1',
    RETRY_MAX_ATTEMPTS: String(RETRY_ATTEMPTS),
    RETRY_BASE_DELAY_MS: String(RETRY_BASE_DELAY_MS),
  };
}

/** Registers both apps (beforeAll/afterAll hooks) and returns the provider table. */
export function useFaultProviders(): FaultProvider[] {
  const anthropicKey = 'sk-ant-api03-FaultMatrixKey7f3a9c0d1e2b4a6c8e0f';
  // Self-hosted OpenAI-compatible servers take any token: one that no generic `sk-` pattern catches.
  const openaiKey = 'vllm-local-token-93c1f0e2a7b4d6';
  const anthropicClock = createManualClock();
  const openaiClock = createManualClock();
  const anthropicLog: string[] = [];
  const openaiLog: string[] = [];
  const anthropic = useAnthropicTestApp({
    env: env(anthropicKey, 'ANTHROPIC_API_KEY'),
    overrides: { clock: anthropicClock, logger: capturingLogger(anthropicLog) },
  });
  const openai = useOpenAiTestApp({
    env: env(openaiKey, 'OPENAI_API_KEY'),
    overrides: { clock: openaiClock, logger: capturingLogger(openaiLog) },
  });
  const providers: FaultProvider[] = [
    {
      name: 'anthropic',
      app: anthropic,
      clock: anthropicClock,
      model: 'anthropic/claude-sonnet-5-5',
      key: anthropicKey,
      text: (text) => ({ body: textMessage(text) }),
      toolUse: (name, input) => ({ body: toolUseMessage(name, input as Record<string, unknown>) }),
      toolUseJson: (name, json) => {
        const message = { ...toolUseMessage(name, {}), model: 'claude-sonnet-5-5' };
        return { raw: JSON.stringify(message).replace('"input":{}', `"input":${json}`) };
      },
      error: (status, type, headers) => ({
        status,
        body: errorBody(type, `request refused for x-api-key ${anthropicKey}`),
        ...(headers ? { headers } : {}),
      }),
      sentAt: [],
      logLines: anthropicLog,
    },
    {
      name: 'openai',
      app: openai,
      clock: openaiClock,
      model: 'openai/qwen2.5',
      key: openaiKey,
      text: (text) => ({ body: chatText(text) }),
      toolUse: (name, input) =>
        typeof input === 'string'
          ? { body: chatToolCall(name, {}, { rawArguments: input }) }
          : { body: chatToolCall(name, input as Record<string, unknown>) },
      toolUseJson: (name, json) => ({ body: chatToolCall(name, {}, { rawArguments: json }) }),
      error: (status, type, headers) => ({
        status,
        body: chatError(type, `Incorrect API key provided: ${openaiKey}`),
        ...(headers ? { headers } : {}),
      }),
      sentAt: [],
      logLines: openaiLog,
    },
  ];
  return providers;
}

/**
 * Serves `replies` in order, then `fallback` for every later request, stamping each request's
 * arrival with the provider's clock (what "the next call came 2 s later" is measured on).
 */
export function script(p: FaultProvider, replies: readonly FakeReply[], fallback: FakeReply = p.text('ok')): void {
  p.sentAt.length = 0;
  p.app.fake.requests.length = 0;
  // A queue of our own, replaced on every call: a test that failed half-way leaves nothing behind.
  const queue = [...replies];
  p.app.fake.setDefault(() => {
    p.sentAt.push(p.clock.now());
    return queue.shift() ?? fallback;
  });
}

export function promptDefinition(
  p: FaultProvider,
  node: Record<string, unknown> = {},
  options: Record<string, unknown> = {},
  agent: Record<string, unknown> = {},
) {
  return {
    name: 'llm-faults',
    agents: { a: { model: p.model, ...agent } },
    root: { type: 'prompt', name: 'ask', agent: 'a', user: 'Answer briefly.', ...node },
    // Workflow-level reflection is on, so a transport retry that used a reflection attempt, or a
    // fail-fast error that was reflected on, would show. The cache is off: every call is a request.
    options: { cache: false, reflection: { enabled: true, maxAttempts: 3 }, ...options },
  };
}

export async function submit(p: FaultProvider, body: unknown): Promise<string> {
  const res = await p.app.t.app.inject({ method: 'POST', url: '/v1/workflows', payload: body as object });
  expect(res.statusCode, res.body).toBe(202);
  return res.json().id as string;
}

export type WorkflowJson = Awaited<ReturnType<typeof waitForStatus>>;

/**
 * Waits for the workflow to end, moving the clock only through its transport-retry waits: each time
 * a `retry` event is published, the sleep it announced (its `delayMs`) is advanced to its due time.
 * The node and workflow deadlines lie far beyond, so they never fire here. Listens on the event bus
 * (what SSE streams read) rather than polling the events page, which would compete with the run for
 * the CPU. Returns the waits slept.
 */
export async function runThroughRetries(
  p: FaultProvider,
  id: string,
): Promise<{ done: WorkflowJson; events: EventJson[]; waits: number[] }> {
  const { app, deps } = p.app.t;
  const announced: number[] = [];
  let ended = false;
  const unsubscribe = deps.events.subscribe(id, (event) => {
    if (event.type === 'retry') announced.push(event.payload.delayMs);
    if (event.type === 'workflowEnd') ended = true;
  });
  const waits: number[] = [];
  try {
    // Whatever was published before the subscription: a run that already ended.
    const first = await app.inject({ method: 'GET', url: `/v1/workflows/${id}` });
    if (first.json().endedAt !== null) ended = true;
    const until = Date.now() + 30_000;
    while (!ended || announced.length > waits.length) {
      const delayMs = announced[waits.length];
      if (delayMs !== undefined) {
        const sleep = p.clock.pending.find((s) => s.ms === delayMs);
        expect(sleep, `the retry's ${delayMs} ms wait is a sleep on the injected clock`).toBeDefined();
        await p.clock.advanceTo(sleep?.dueAt ?? p.clock.now());
        waits.push(delayMs);
        continue;
      }
      if (Date.now() > until) throw new Error(`workflow ${id} did not end within 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  } finally {
    unsubscribe();
  }
  return { done: await waitForStatus(app, id), events: await allEvents(app, id), waits };
}

/**
 * What the service answers about a finished workflow, every read a client may make: each must be a
 * 200 (never a 5xx), and none may quote the provider key — nor may any line the service logged.
 */
export async function readEverything(p: FaultProvider, done: WorkflowJson): Promise<string> {
  const { app } = p.app.t;
  const id = done.id as string;
  const urls = [
    '/healthz',
    '/readyz',
    `/v1/workflows/${id}`,
    `/v1/workflows/${id}/tree`,
    `/v1/workflows/${id}/events?limit=1000`,
    `/v1/workflows/${id}/reflections`,
    `/v1/workflows/${id}/metrics`,
    `/v1/traces/${done.traceId as string}`,
  ];
  const bodies: string[] = [];
  for (const url of urls) {
    const res = await app.inject({ method: 'GET', url });
    expect(res.statusCode, `GET ${url}: ${res.body.slice(0, 300)}`).toBe(200);
    bodies.push(res.body);
  }
  const all = bodies.join('\n');
  expect(all.includes(p.key), 'the provider key appears in an API answer').toBe(false);
  expect(p.logLines.join('').includes(p.key), 'the provider key appears in a log line').toBe(false);
  return all;
}

/** After a fault, the one concurrency slot is free and the service still runs work: a plain workflow completes. */
export async function expectNextWorkflowRuns(p: FaultProvider): Promise<void> {
  script(p, [p.text('next one')]);
  const done = await waitForStatus(p.app.t.app, await submit(p, promptDefinition(p)));
  expect(done.status).toBe('completed');
  expect(done.output).toBe('next one');
  expect(p.app.fake.requests).toHaveLength(1);
}

/** `{"type": [[[…]]]}`: an object `depth` containers deep, as JSON text. */
export function nestedJson(depth: number): string {
  const arrays = depth - 1;
  return `{"type": ${'['.repeat(arrays)}${']'.repeat(arrays)}}`;
}

export function reflectionEvents(events: readonly EventJson[]): EventJson[] {
  return events.filter((e) => e.type === 'reflectionStart' || e.type === 'reflectionEnd');
}

/**
 * What each row measured, per provider; printed as `<suite>/<provider>` figures after the file's
 * tests. Returns the function a row records its facts with.
 */
export function useRowFigures(
  suite: string,
  providers: readonly FaultProvider[],
): (p: FaultProvider, row: string, facts: Record<string, unknown>) => void {
  const figures = new Map<string, Record<string, unknown>>(providers.map((p) => [p.name, {}]));
  afterAll(() => {
    for (const [name, rows] of figures) reportFigures(`${suite}/${name}`, rows);
  });
  return (p, row, facts) => {
    const rows = figures.get(p.name);
    if (rows) rows[row] = facts;
  };
}
