import { type Agent, request } from 'node:http';
import { SseParser } from './sse-parser.js';

/**
 * Raw node:http clients for the shutdown tests, which need to see what a request's socket did:
 * when it was written, whether the answer arrived whole, or which network error replaced it.
 */

export interface Outcome {
  path: string;
  /** When the request was fully handed to the socket. */
  writtenAt?: number;
  /** Sent on a kept-alive connection rather than a fresh one. */
  reused?: boolean;
  answeredAt?: number;
  status?: number;
  headers?: Record<string, string | string[] | undefined>;
  body?: string;
  error?: string;
}

export const refused = (o: Outcome) => o.error?.startsWith('ECONNREFUSED') ?? false;

function errorText(err: NodeJS.ErrnoException): string {
  return `${err.code ?? ''} ${err.message}`.trim();
}

interface SendOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

/** One request on `agent` (a keep-alive agent, or undefined for a fresh connection); never rejects. */
export function send(agent: Agent | undefined, base: URL, path: string, options: SendOptions = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    const outcome: Outcome = { path };
    const failed = (err: NodeJS.ErrnoException) => {
      outcome.error = errorText(err);
      resolve(outcome);
    };
    const req = request(
      {
        agent: agent ?? false,
        host: base.hostname,
        port: base.port,
        path,
        method: options.method ?? 'GET',
        headers: options.headers,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', failed);
        res.on('end', () => {
          Object.assign(outcome, {
            answeredAt: Date.now(),
            status: res.statusCode,
            headers: res.headers,
            body: Buffer.concat(chunks).toString(),
          });
          resolve(outcome);
        });
      },
    );
    req.on('finish', () => {
      outcome.writtenAt = Date.now();
      outcome.reused = req.reusedSocket;
    });
    req.on('error', failed);
    req.setTimeout(15_000, () => req.destroy(new Error('client timeout')));
    req.end(options.body);
  });
}

/** An answer read in full: whether the bytes received match the content-length it announced. */
export interface FullAnswer extends Outcome {
  bytes: number;
  contentLength: number | undefined;
}

function collect(res: import('node:http').IncomingMessage, outcome: FullAnswer, done: () => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    outcome.bytes += chunk.length;
  });
  res.on('error', (err: NodeJS.ErrnoException) => {
    outcome.error = errorText(err);
    done();
  });
  // 'aborted' then 'close' without 'end': the connection went away mid-body.
  res.on('close', () => {
    if (!res.complete && outcome.error === undefined) outcome.error = 'incomplete body (connection closed)';
    done();
  });
  res.on('end', () => {
    outcome.answeredAt = Date.now();
    outcome.body = Buffer.concat(chunks).toString();
    done();
  });
}

/**
 * A POST whose headers and first half of the body are written now; `finish()` writes the rest.
 * Until then the request is on the wire but not yet whole: in flight, in the server's hands.
 */
export function slowUpload(
  base: URL,
  path: string,
  body: string,
  headers: Record<string, string> = {},
): { headersSent: Promise<void>; finish(): void; answer: Promise<FullAnswer> } {
  const bytes = Buffer.from(body);
  const half = Math.floor(bytes.length / 2);
  const outcome: FullAnswer = { path, bytes: 0, contentLength: undefined };
  let markSent = () => {};
  const headersSent = new Promise<void>((resolve) => {
    markSent = resolve;
  });
  let req: ReturnType<typeof request> | undefined;
  const answer = new Promise<FullAnswer>((resolve) => {
    let settled = false;
    const done = () => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    req = request(
      {
        agent: false,
        host: base.hostname,
        port: base.port,
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(bytes.length), ...headers },
      },
      (res) => {
        outcome.status = res.statusCode;
        outcome.headers = res.headers;
        outcome.contentLength = Number(res.headers['content-length'] ?? Number.NaN) || undefined;
        collect(res, outcome, done);
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      outcome.error = errorText(err);
      done();
    });
    req.setTimeout(15_000, () => req?.destroy(new Error('client timeout')));
    req.write(bytes.subarray(0, half), () => markSent());
  });
  return {
    headersSent,
    finish() {
      req?.end(bytes.subarray(half), () => {
        outcome.writtenAt = Date.now();
      });
    },
    answer,
  };
}

/**
 * A GET whose answer is not read until `resume()`: the client stops reading as soon as the status
 * line arrives, so a large body sits in socket buffers (the kernel's, and the server's own once
 * those are full) while the server is asked to stop.
 */
export function pausedRead(
  base: URL,
  path: string,
): { answering: Promise<void>; resume(): void; answer: Promise<FullAnswer> } {
  const outcome: FullAnswer = { path, bytes: 0, contentLength: undefined };
  let paused: import('node:http').IncomingMessage | undefined;
  let resumeAsked = false;
  let markAnswering = () => {};
  const answering = new Promise<void>((resolve) => {
    markAnswering = resolve;
  });
  const answer = new Promise<FullAnswer>((resolve) => {
    let settled = false;
    const done = () => {
      if (settled) return;
      settled = true;
      markAnswering();
      resolve(outcome);
    };
    const req = request({ agent: false, host: base.hostname, port: base.port, path }, (res) => {
      outcome.status = res.statusCode;
      outcome.headers = res.headers;
      outcome.contentLength = Number(res.headers['content-length'] ?? Number.NaN) || undefined;
      // Paused first: the data listener `collect` adds then does not start the flow.
      if (!resumeAsked) res.pause();
      paused = res;
      collect(res, outcome, done);
      markAnswering();
    });
    req.on('finish', () => {
      outcome.writtenAt = Date.now();
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      outcome.error = errorText(err);
      done();
    });
    req.setTimeout(15_000, () => req.destroy(new Error('client timeout')));
    req.end();
  });
  return {
    answering,
    resume() {
      resumeAsked = true;
      paused?.resume();
    },
    answer,
  };
}

/** An open SSE stream: its frames so far, and how it ended (`ended`: the server closed it cleanly). */
export interface EventStream {
  parser: SseParser;
  status: Promise<number>;
  done: Promise<{ ended: boolean; error?: string; endedAt: number }>;
  close(): void;
}

export function openEventStream(
  base: URL,
  workflowId: string,
  options: { lastEventId?: string; headers?: Record<string, string> } = {},
): EventStream {
  const parser = new SseParser();
  const headers: Record<string, string> = { accept: 'text/event-stream', ...options.headers };
  if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
  let setStatus: (status: number) => void = () => {};
  const status = new Promise<number>((resolve) => {
    setStatus = resolve;
  });
  let req: ReturnType<typeof request> | undefined;
  const done = new Promise<{ ended: boolean; error?: string; endedAt: number }>((resolve) => {
    let settled = false;
    const finish = (result: { ended: boolean; error?: string }) => {
      if (settled) return;
      settled = true;
      setStatus(0);
      resolve({ ...result, endedAt: Date.now() });
    };
    req = request(
      { agent: false, host: base.hostname, port: base.port, path: `/v1/workflows/${workflowId}/events`, headers },
      (res) => {
        setStatus(res.statusCode ?? 0);
        res.setEncoding('utf8');
        res.on('data', (text: string) => parser.push(text));
        res.on('error', (err: NodeJS.ErrnoException) => finish({ ended: false, error: errorText(err) }));
        res.on('end', () => finish({ ended: true }));
        res.on('close', () => {
          if (!res.complete) finish({ ended: false, error: 'stream closed without its end' });
        });
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => finish({ ended: false, error: errorText(err) }));
    req.end();
  });
  return { parser, status, done, close: () => req?.destroy() };
}
