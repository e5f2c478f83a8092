import { ProviderError, type ProviderErrorKind } from '../../src/domain/errors.js';
import type { ContentBlock, LlmRequest, LlmResponse, StopReason, TokenUsage } from '../../src/domain/llm.js';
import type { Clock, LlmProvider } from '../../src/domain/ports.js';
import { reflectionResponseFormat } from '../../src/reflection/policy.js';

/**
 * A scripted LlmProvider in the spirit of openai-agents-js's `ScriptedModel`: it answers from a
 * FIFO queue of replies, records every request it receives, may check each request against the
 * reply's predicate, and fails loudly on a call nobody scripted — such a call is recorded in
 * `unexpected` (the engine harness fails the test on it at `close()`) and thrown as an
 * `UnexpectedModelCallError`, which the engine treats as an internal error.
 */

/** What a reply answers with: exactly one of these. */
export type ScriptedAnswer =
  | { text: string }
  /** Answered as its JSON text. */
  | { json: unknown }
  /** One tool call, or several in one turn (stop reason `tool_use`). */
  | { toolUse: ScriptedToolUse | ScriptedToolUse[] }
  /** Thrown instead of answering: a ProviderError goes through the transport-retry layer. */
  | { error: Error };

export interface ScriptedToolUse {
  name: string;
  /** The input, or a function of the request it answers (e.g. to use what an earlier tool returned). */
  input?: Record<string, unknown> | ((request: LlmRequest) => Record<string, unknown>);
}

export interface ScriptedReplyOptions {
  /** Names the reply in failure messages. */
  label?: string;
  /** The request this reply is for; any other request arriving while it is next is an unexpected call. */
  when?: (request: LlmRequest) => boolean;
  /** The answer comes after this much time on the injected clock (the call's signal cuts the wait). */
  latencyMs?: number;
  /** The answer waits for this promise (see `createGate`); the call's signal cuts the wait. */
  until?: Promise<unknown>;
  /** Defaults: 10 input and 5 output tokens. */
  usage?: Partial<TokenUsage>;
  /** Default: `tool_use` for a toolUse answer, else `end_turn`. */
  stopReason?: StopReason;
}

export type ScriptedReply = ScriptedAnswer & ScriptedReplyOptions;

export interface ScriptedCall {
  /** 0-based, in arrival order. */
  readonly index: number;
  /** A snapshot of the request as it arrived (the engine reuses and extends its request objects). */
  readonly request: LlmRequest;
  readonly signal: AbortSignal;
  /** Clock time the call arrived. */
  readonly receivedAt: number;
  /** The reply it took; undefined for an unexpected call or one that arrived already aborted. */
  readonly reply: ScriptedReply | undefined;
  /** `waiting` until answered; `aborted` when its signal cut it; `unexpected` when nothing was scripted for it. */
  state: 'waiting' | 'answered' | 'failed' | 'aborted' | 'unexpected';
  /** Clock time it settled. */
  settledAt?: number;
}

export interface UnexpectedCall {
  index: number;
  request: LlmRequest;
  reason: string;
}

export class UnexpectedModelCallError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnexpectedModelCallError';
  }
}

export interface ScriptedModel extends LlmProvider {
  /** The provider prefix it is registered under (`script` → models `script/<anything>`). */
  readonly prefix: string;
  /** Adds replies at the end of the queue. */
  enqueue(...replies: ScriptedReply[]): void;
  /** Every call received, in arrival order. */
  readonly calls: readonly ScriptedCall[];
  /** Calls received and not answered yet. */
  readonly inFlight: readonly ScriptedCall[];
  /** Replies not taken yet. */
  readonly remaining: readonly ScriptedReply[];
  /** Calls nothing was scripted for (empty queue, or the next reply's predicate refused the request). */
  readonly unexpected: readonly UnexpectedCall[];
  /** Requests answered from the response cache instead of a call (reported through `replayed`). */
  readonly cacheReplays: readonly LlmRequest[];
  /** Drops the replies not taken (a test that ends a workflow early on purpose). */
  discardRemaining(): ScriptedReply[];
  /** Returns and forgets the unexpected calls, for a test that provokes one on purpose. */
  takeUnexpected(): UnexpectedCall[];
}

export function createScriptedModel(options: { clock: Clock; prefix?: string }): ScriptedModel {
  const { clock } = options;
  const prefix = options.prefix ?? 'script';
  const queue: ScriptedReply[] = [];
  const calls: ScriptedCall[] = [];
  let unexpected: UnexpectedCall[] = [];
  const cacheReplays: LlmRequest[] = [];

  function refuse(call: ScriptedCall, reason: string): never {
    call.state = 'unexpected';
    call.settledAt = clock.now();
    unexpected.push({ index: call.index, request: call.request, reason });
    throw new UnexpectedModelCallError(
      `unexpected model call #${call.index} (${describeRequest(call.request, prefix)}): ${reason}`,
    );
  }

  async function answer(call: ScriptedCall, reply: ScriptedReply, signal: AbortSignal): Promise<LlmResponse> {
    try {
      if (reply.latencyMs !== undefined && reply.latencyMs > 0) await clock.sleep(reply.latencyMs, signal);
      if (reply.until !== undefined) await abortable(reply.until, signal);
    } catch (err) {
      call.state = 'aborted';
      call.settledAt = clock.now();
      throw err;
    }
    call.settledAt = clock.now();
    if ('error' in reply) {
      call.state = 'failed';
      throw reply.error;
    }
    call.state = 'answered';
    return respond(call, reply);
  }

  return {
    prefix,

    async complete(request, { signal }) {
      const index = calls.length;
      const snapshot = structuredClone(request);
      if (signal.aborted) {
        calls.push({ index, request: snapshot, signal, receivedAt: clock.now(), reply: undefined, state: 'aborted' });
        throw signal.reason;
      }
      const next = queue[0];
      const call: ScriptedCall = {
        index,
        request: snapshot,
        signal,
        receivedAt: clock.now(),
        reply: undefined,
        state: 'waiting',
      };
      calls.push(call);
      if (next === undefined) refuse(call, 'no scripted reply left');
      if (next.when !== undefined && !next.when(request)) {
        refuse(call, `the next reply${next.label ? ` (${next.label})` : ''} does not match this request`);
      }
      queue.shift();
      (call as { reply: ScriptedReply }).reply = next;
      return answer(call, next, signal);
    },

    replayed(request) {
      cacheReplays.push(structuredClone(request));
    },

    enqueue(...replies) {
      for (const reply of replies) checkReply(reply);
      queue.push(...replies);
    },

    get calls() {
      return calls;
    },
    get inFlight() {
      return calls.filter((call) => call.state === 'waiting');
    },
    get remaining() {
      return [...queue];
    },
    get unexpected() {
      return unexpected;
    },
    get cacheReplays() {
      return cacheReplays;
    },

    discardRemaining() {
      return queue.splice(0, queue.length);
    },

    takeUnexpected() {
      const taken = unexpected;
      unexpected = [];
      return taken;
    },
  };
}

function checkReply(reply: ScriptedReply): void {
  const kinds = ['text', 'json', 'toolUse', 'error'].filter((kind) => kind in reply);
  if (kinds.length !== 1)
    throw new TypeError(`a scripted reply has exactly one of text, json, toolUse, error; got ${kinds}`);
}

function respond(call: ScriptedCall, reply: ScriptedReply): LlmResponse {
  let content: ContentBlock[];
  let stopReason: StopReason;
  if ('toolUse' in reply) {
    const uses = Array.isArray(reply.toolUse) ? reply.toolUse : [reply.toolUse];
    content = uses.map((use, i) => ({
      type: 'tool_use',
      id: `toolu_script_${call.index}_${i}`,
      name: use.name,
      input: typeof use.input === 'function' ? use.input(call.request) : (use.input ?? {}),
    }));
    stopReason = 'tool_use';
  } else {
    const text = 'text' in reply ? reply.text : (JSON.stringify((reply as { json: unknown }).json) ?? 'null');
    content = [{ type: 'text', text }];
    stopReason = 'end_turn';
  }
  return {
    content,
    stopReason: reply.stopReason ?? stopReason,
    usage: { inputTokens: 10, outputTokens: 5, ...reply.usage },
    model: call.request.model,
    requestId: `script_${call.index}`,
  };
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/** A short description of a request for failure messages: model, last user text, purpose hints. */
export function describeRequest(request: LlmRequest, prefix = 'script'): string {
  const last = request.messages.at(-1);
  let text = '';
  if (typeof last?.content === 'string') text = last.content;
  else if (last) {
    text = last.content
      .map((block) => (block.type === 'text' ? block.text : block.type === 'tool_result' ? '[tool_result]' : ''))
      .join(' ');
  }
  const short = text.length > 80 ? `${text.slice(0, 80)}…` : text;
  return `model ${prefix}/${request.model}, ${request.messages.length} message(s), last: ${JSON.stringify(short)}`;
}

/** A promise the test opens by hand: a reply `until` it is opened is held in flight. */
export interface Gate {
  readonly promise: Promise<void>;
  open(): void;
  readonly opened: boolean;
}

export function createGate(): Gate {
  let open: () => void = () => {};
  let opened = false;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return {
    promise,
    open() {
      opened = true;
      open();
    },
    get opened() {
      return opened;
    },
  };
}

/** A 429 with a retry-after, as an adapter classifies it (`retry-after-ms: <ms>`). */
export function rateLimited(retryAfterMs: number, message = 'slow down'): ProviderError {
  return new ProviderError('rate_limit', `Scripted HTTP 429: ${message}`, { httpStatus: 429, retryAfterMs });
}

/** Any other classified provider failure (`server`, `authentication`, …). */
export function providerError(kind: ProviderErrorKind, message: string = kind, httpStatus?: number): ProviderError {
  return new ProviderError(kind, `Scripted provider error: ${message}`, httpStatus === undefined ? {} : { httpStatus });
}

/** Whether a request is a workflow-level reflection call (it asks for the reflection advice schema). */
export function isReflectionRequest(request: LlmRequest): boolean {
  return JSON.stringify(request.responseFormat) === REFLECTION_FORMAT;
}
const REFLECTION_FORMAT = JSON.stringify(reflectionResponseFormat);
