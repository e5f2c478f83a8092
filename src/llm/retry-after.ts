import { classifyHttpFailure, ProviderError } from '../domain/errors.js';

/** The part of a WHATWG `Headers` the adapters read; both the SDK and fetch responses have it. */
export interface HeaderReader {
  get(name: string): string | null;
}

const SECONDS = /^\s*\d+(\.\d+)?\s*$/;

/**
 * How long the provider asked us to wait, in ms: `retry-after-ms` (Anthropic, OpenAI) wins over
 * `retry-after`, which is either delta-seconds or an HTTP date (RFC 9110 §10.2.3).
 * Unparseable or negative values mean "no hint" so the executor falls back to its own backoff.
 */
export function retryAfterMs(headers: HeaderReader | null | undefined, now: number = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null) {
    const value = Number(ms);
    if (ms.trim() !== '' && Number.isFinite(value) && value >= 0) return Math.ceil(value);
  }
  const retryAfter = headers.get('retry-after');
  if (retryAfter === null) return undefined;
  if (SECONDS.test(retryAfter)) return Math.ceil(Number(retryAfter) * 1000);
  const date = Date.parse(retryAfter);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Replaces every occurrence of `secret` so a server echoing credentials cannot leak them into logs. */
export function redact(text: string, secret: string | undefined): string {
  if (!secret || secret.length < 4 || !text.includes(secret)) return text;
  return text.split(secret).join('[redacted]');
}

/**
 * A provider's message is kept to its start: it becomes the node's and the workflow's error, several
 * events and a log line, and a provider (or anything posing as one) may answer with megabytes.
 */
const MAX_PROVIDER_MESSAGE_CHARS = 2_000;

/**
 * `<head>: <message>`; a cut message's head says how much was kept. Said before the message, so no
 * bidi override left open in the kept text can reverse it.
 */
function withMessage(head: string, message: string): string {
  if (message.length <= MAX_PROVIDER_MESSAGE_CHARS) return `${head}: ${message}`;
  const of = `the first ${MAX_PROVIDER_MESSAGE_CHARS.toLocaleString('en')} of ${message.length.toLocaleString('en')} characters`;
  return `${head} (${of}): ${message.slice(0, MAX_PROVIDER_MESSAGE_CHARS)}…`;
}

/** The one way an HTTP failure from any provider becomes a ProviderError (docs/design.md#transport-retries). */
export function httpProviderError(
  provider: string,
  status: number,
  message: string,
  options: { headers?: HeaderReader | null; kind?: ProviderError['kind']; cause?: unknown } = {},
): ProviderError {
  // Classified on the whole message; only what is kept is bounded.
  const kind = options.kind ?? classifyHttpFailure(status, message);
  return new ProviderError(kind, withMessage(`${provider} HTTP ${status}`, message), {
    httpStatus: status,
    retryAfterMs: retryAfterMs(options.headers),
    cause: options.cause,
  });
}
