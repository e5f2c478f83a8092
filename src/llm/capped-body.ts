import { ProviderError } from '../domain/errors.js';

/**
 * A provider answer is read with a byte cap while it streams (MAX_PROVIDER_RESPONSE_BYTES): a
 * hostile or broken server that sends hundreds of megabytes is cut off at the cap instead of being
 * buffered whole (a 540 MiB body once cost 2 GB of downloads and 1.3 GB of RSS). Past the cap the
 * call is LLM_BAD_RESPONSE and never retried: the same request would bring the same body back.
 */
export class ResponseTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`a response body larger than ${maxBytes} bytes`);
    this.name = 'ResponseTooLargeError';
  }
}

/**
 * The same response with a body that errors with ResponseTooLargeError once more than `maxBytes`
 * have arrived (at once, when content-length already says so). The source is cancelled, which
 * closes the connection, so nothing past the cap is downloaded.
 */
export function capResponse(response: Response, maxBytes: number): Response {
  const source = response.body;
  if (source === null) return response;
  const declared = Number(response.headers.get('content-length'));
  const reader = source.getReader();
  let received = 0;
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      if (Number.isFinite(declared) && declared > maxBytes) {
        await reader.cancel();
        controller.error(new ResponseTooLargeError(maxBytes));
      }
    },
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) {
        controller.close();
        return;
      }
      received += value.byteLength;
      if (received > maxBytes) {
        await reader.cancel();
        controller.error(new ResponseTooLargeError(maxBytes));
        return;
      }
      controller.enqueue(value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** `fetch` with every response capped: what both adapters send their requests through. */
export function cappedFetch(maxBytes: number, inner: typeof fetch = fetch): typeof fetch {
  return async (input, init) => capResponse(await inner(input, init), maxBytes);
}

/** The oversized-body failure anywhere in `err`'s cause chain (SDKs wrap what fetch throws). */
export function oversizedResponse(err: unknown, provider: string): ProviderError | undefined {
  for (let cause = err, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    if (cause instanceof ResponseTooLargeError) {
      return new ProviderError('oversized_response', `${provider} answered with ${cause.message}`, { cause: err });
    }
  }
  return undefined;
}

/**
 * Whether a failure is the network's: undici's `fetch failed` / `terminated` TypeErrors carry the
 * socket error (with a `code`) as their cause. Anything else thrown while calling a provider is a
 * fault of ours and must not be retried as if the connection had dropped.
 */
export function isNetworkFailure(err: unknown): boolean {
  if (!(err instanceof TypeError)) return false;
  const cause = (err as { cause?: { code?: unknown } }).cause;
  return err.message === 'terminated' || err.message === 'fetch failed' || typeof cause?.code === 'string';
}
