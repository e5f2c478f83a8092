import type { LlmMessage, LlmRequest, LlmResponse, ToolDefinition } from '../../src/domain/llm.js';
import type { LlmProvider } from '../../src/domain/ports.js';
import type { FakeReply, FakeServer, ReplySource } from '../support/fake-anthropic.js';

/**
 * What the LlmProvider contract (llm-provider.contract.test.ts) needs from each adapter: how to
 * script an answer for it, and, for the HTTP adapters, what it sends and which bodies of its dialect
 * it must refuse. The spec speaks in `Reply`s; each adapter turns them into its own fake's replies.
 */

export const SYSTEM = 'You review code for bugs.';
export const USER = 'Analyze this code';
export const MAX_TOKENS = 512;
/** Big enough that a bounded body cap or one MiB of tool name never reaches it. */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

export const retrieveTool: ToolDefinition = {
  name: 'retrieve',
  description: 'Search docs',
  input_schema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
};

/** An answer in the contract's own terms. */
export type Reply =
  | { text: string }
  | { toolUse: { name: string; input: Record<string, unknown> } }
  | { error: { status: number; message: string; retryAfterMs?: number } }
  /** Never answers: the caller has to abort. */
  | { hang: true };

/** A started adapter: its provider, and the backend the tests script and watch. */
export interface Harness<Native> {
  provider: LlmProvider;
  /** Queues answers for the next calls, in order. */
  answer(...replies: Array<Reply | { native: Native }>): void;
  /** The contract's request for this adapter (the sim's carries the queued answers as its script). */
  request(overrides?: Partial<LlmRequest>): LlmRequest;
  /** Calls that reached the backend: requests the fake server received, or sim latencies started. */
  reached(): number;
  /** Forgets queued answers' bookkeeping between tests. */
  reset(): void;
  /** The HTTP adapters' fake server. */
  fake?: FakeServer;
  close(): Promise<void>;
}

/** What an HTTP adapter sends and refuses, in its dialect (the fake server stands in for the API). */
export interface HttpSide {
  apiKey: string;
  /** How its HTTP failures are headed (`<head> HTTP 400: …`). */
  errorHead: string;
  start(): Promise<FakeServer>;
  make(url: string): LlmProvider;
  reply(reply: Reply): FakeReply;
  /** A tool call naming `name`, its id replaced by `id` when given. */
  toolCall(name: string, id?: string): FakeReply;
  /** The request `request({ stop: ['END'] })` as it goes over the wire. */
  textWire: { method: string; path: string; headers: Record<string, string>; body: unknown };
  /** Other ways of configuring or calling it, and what they change on the wire. */
  variants: Array<{
    label: string;
    make(url: string): LlmProvider;
    overrides: Partial<LlmRequest>;
    path: string;
    headers: Record<string, string | undefined>;
    messages: unknown;
    bodyLacks: string[];
  }>;
  toolsWire(tools: ToolDefinition[]): unknown;
  /** The messages of the second tool-loop request, given the call the first answer made. */
  turnsWire(messages: LlmMessage[], callId: string): unknown;
  /** Bodies of its dialect a 2xx may bring that are no usable answer (besides the common ones). */
  badBodies: Array<[string, FakeReply]>;
  badResponse: { message: RegExp; httpStatus: number | undefined };
  /** Error bodies only its dialect has. */
  dialectErrors: Array<[string, FakeReply, string, string]>;
}

export interface ProviderAdapter<Native> {
  name: string;
  model: string;
  start(): Promise<Harness<Native>>;
  requestId: RegExp;
  toolUseId: RegExp;
  /** An answer carrying usage, and the LlmUsage it must map to for the contract's request. */
  usage: { reply: { native: Native } | Reply; expected: LlmResponse['usage'] };
  /** `temperature`: refused before sending, sent on, or of no effect. */
  temperature: 'refused' | 'sent' | 'ignored';
  /** Stop reasons only its dialect can express. */
  stopReasons: Array<[string, { native: Native }, LlmResponse['stopReason']]>;
  /** Answers only its dialect can give, and the content they map to. */
  dialectAnswers: Array<[string, { native: Native }, LlmResponse['content']]>;
  http?: HttpSide;
}

/** An HTTP adapter's harness: the answers are the fake server's queue, the calls its recorded requests. */
export async function httpHarness(side: HttpSide, model: string): Promise<Harness<FakeReply>> {
  const fake = await side.start();
  const translate = (reply: Reply | { native: FakeReply }): ReplySource =>
    'native' in reply ? reply.native : side.reply(reply);
  return {
    provider: side.make(fake.url),
    fake,
    answer: (...replies) => fake.enqueue(...replies.map(translate)),
    request: (overrides = {}) => ({
      model,
      system: SYSTEM,
      messages: [{ role: 'user', content: USER }],
      maxTokens: MAX_TOKENS,
      ...overrides,
    }),
    reached: () => fake.requests.length,
    reset: () => {
      fake.requests.length = 0;
    },
    close: () => fake.close(),
  };
}

/** The assistant's text and call, then a failed tool result and more user text. */
export function toolTurns(call: { id: string; name: string; input: Record<string, unknown> }): LlmMessage[] {
  return [
    { role: 'user', content: USER },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Looking.' },
        { type: 'tool_use', ...call },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: call.id, content: 'no results', is_error: true },
        { type: 'text', text: 'Go on.' },
      ],
    },
  ];
}
