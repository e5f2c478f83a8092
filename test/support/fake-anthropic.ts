import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * A scripted stand-in for an LLM HTTP API on 127.0.0.1 that the real SDKs reach via `baseURL`.
 * Replies are served FIFO, then the default one; every request is recorded. Works across
 * processes too: a child process only needs `url`.
 */

export interface FakeReply {
  status?: number;
  body?: unknown;
  /** Sent byte for byte instead of `JSON.stringify(body)`: invalid JSON, an empty body, any text. */
  raw?: string;
  /**
   * A broken transport instead of an answer. `truncate`: the headers declare the whole body's
   * content-length, half of it is sent, then the socket is destroyed. `reset`: the connection is
   * reset (TCP RST) before any byte of the response.
   */
  fault?: 'truncate' | 'reset';
  headers?: Record<string, string>;
  /**
   * A 200 of `count` copies of `chunk`, chunked (no content-length), written as fast as the client
   * reads: a body of any size without holding it in memory. Counted in `FakeServer.bytesSent`.
   */
  stream?: { chunk: string; count: number };
  delayMs?: number;
  /** Never answer; the client has to abort (close() still ends it). */
  hang?: boolean;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON, or the raw text when it is not JSON. */
  body: unknown;
  at: number;
}

export type ReplySource = FakeReply | ((request: RecordedRequest) => FakeReply | Promise<FakeReply>);

export interface FakeServer {
  /** `http://127.0.0.1:<port>` plus the API's base path (see each starter). */
  url: string;
  requests: RecordedRequest[];
  /** Body bytes written by `stream` replies so far (what the client was made to download). */
  readonly bytesSent: number;
  enqueue(...replies: ReplySource[]): void;
  setDefault(reply: ReplySource): void;
  close(): Promise<void>;
}

export interface FakeServerSpec {
  /** Paths the API serves; anything else is a 404. */
  paths: readonly string[];
  basePath: string;
  defaultReply: ReplySource;
  /** Lets a starter complete reply bodies from the request (e.g. echo the model). */
  finishBody?: (body: unknown, request: RecordedRequest) => unknown;
}

/** The generic server both fakes are built on. */
export async function startFakeServer(spec: FakeServerSpec): Promise<FakeServer> {
  const queue: ReplySource[] = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let defaultReply = spec.defaultReply;
  let bytesSent = 0;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = raw;
      try {
        body = raw === '' ? undefined : JSON.parse(raw);
      } catch {
        // keep the raw text
      }
      const request: RecordedRequest = {
        method: req.method ?? 'GET',
        path: (req.url ?? '/').split('?')[0] ?? '/',
        headers: req.headers,
        body,
        at: Date.now(),
      };
      requests.push(request);
      if (!spec.paths.includes(request.path)) {
        send(res, { status: 404, body: { error: { type: 'not_found_error', message: `no route ${request.path}` } } });
        return;
      }
      const source = queue.shift() ?? defaultReply;
      Promise.resolve(typeof source === 'function' ? source(request) : source).then(
        (reply) => deliver(res, reply, request),
        (err: unknown) => send(res, { status: 500, body: { error: { type: 'api_error', message: String(err) } } }),
      );
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  function deliver(res: ServerResponse, reply: FakeReply, request: RecordedRequest): void {
    if (reply.hang) return;
    if (reply.stream) {
      streamBody(res, reply.stream, (bytes) => {
        bytesSent += bytes;
      });
      return;
    }
    const finished = { ...reply, body: spec.finishBody ? spec.finishBody(reply.body, request) : reply.body };
    if (!reply.delayMs) {
      send(res, finished);
      return;
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      send(res, finished);
    }, reply.delayMs);
    timers.add(timer);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('fake server has no TCP address');

  return {
    url: `http://127.0.0.1:${address.port}${spec.basePath}`,
    requests,
    get bytesSent() {
      return bytesSent;
    },
    enqueue: (...replies) => {
      queue.push(...replies);
    },
    setDefault: (reply) => {
      defaultReply = reply;
    },
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      // Hanging replies keep their sockets open: destroy them so close() resolves.
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Writes the chunks one after another, each when the socket has room, until done or the client leaves. */
function streamBody(
  res: ServerResponse,
  stream: { chunk: string; count: number },
  onWrite: (bytes: number) => void,
): void {
  const chunk = Buffer.from(stream.chunk);
  res.writeHead(200, { 'content-type': 'application/json' });
  let left = stream.count;
  const pump = (): void => {
    while (left > 0 && !res.destroyed) {
      left--;
      onWrite(chunk.length);
      if (!res.write(chunk)) {
        res.once('drain', pump);
        return;
      }
    }
    if (left === 0 && !res.destroyed) res.end();
  };
  pump();
}

function send(res: ServerResponse, reply: FakeReply): void {
  if (res.writableEnded || res.destroyed) return;
  if (reply.fault === 'reset') {
    res.socket?.resetAndDestroy();
    return;
  }
  const payload = reply.raw ?? (reply.body === undefined ? '' : JSON.stringify(reply.body));
  res.writeHead(reply.status ?? 200, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    ...reply.headers,
  });
  if (reply.fault === 'truncate') {
    // The client has the headers and part of the body, then the connection is gone.
    const bytes = Buffer.from(payload);
    res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => res.socket?.destroy());
    return;
  }
  res.end(payload);
}

// --- Anthropic Messages API ---------------------------------------------------------------------

let messageCounter = 0;

export interface FakeUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

function message(content: unknown[], stopReason: string, usage: FakeUsage = {}) {
  messageCounter++;
  return {
    id: `msg_fake_${messageCounter}`,
    type: 'message',
    role: 'assistant',
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: {
      input_tokens: usage.input_tokens ?? 10,
      output_tokens: usage.output_tokens ?? 5,
      cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
      cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0,
    },
  };
}

/** A `message` body (serve it as `{ body }`); `model` is filled from the request when served. */
export function textMessage(text: string, usage?: FakeUsage) {
  return message([{ type: 'text', text }], 'end_turn', usage);
}

export function toolUseMessage(name: string, input: Record<string, unknown>, usage?: FakeUsage) {
  return message([{ type: 'tool_use', id: `toolu_fake_${messageCounter + 1}`, name, input }], 'tool_use', usage);
}

/** Anthropic's error envelope, e.g. `errorBody('rate_limit_error', 'slow down')`. */
export function errorBody(type: string, messageText: string) {
  return { type: 'error', error: { type, message: messageText } };
}

/** `url` is the SDK's `baseURL` (the SDK adds `/v1/messages`). */
export function startFakeAnthropic(options: { defaultReply?: ReplySource } = {}): Promise<FakeServer> {
  return startFakeServer({
    paths: ['/v1/messages'],
    basePath: '',
    defaultReply: options.defaultReply ?? (() => ({ body: textMessage('ok') })),
    finishBody: (body, request) => {
      const isMessage = typeof body === 'object' && body !== null && (body as { type?: unknown }).type === 'message';
      if (!isMessage || 'model' in body) return body;
      const requested = (request.body as { model?: unknown } | undefined)?.model;
      return { ...body, model: typeof requested === 'string' ? requested : 'claude-fake' };
    },
  });
}
