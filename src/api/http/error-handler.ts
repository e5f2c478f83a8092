import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorDetail, ValidationError } from '../../domain/errors.js';
import type { InvalidJsonError } from './json-body.js';
import type { ErrorBody } from './schemas.js';
import { allowedKeysAt, closestKey } from './unknown-fields.js';
import { plainMessage } from './validation-messages.js';

/**
 * The one HTTP error mapping (docs/design.md#house-style, docs/design.md#http-api-conventions): every error leaves as
 * `{ statusCode, code, error, message, details? }`. 5xx answers are generic and never carry the
 * original message; the error itself is handed to the request log line (one line per request).
 */

/** Fastify's own error codes that deserve a stable public code of their own. */
const FASTIFY_CODES: Record<string, string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'BAD_REQUEST',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
  FST_ERR_NOT_FOUND: 'NOT_FOUND',
  FST_ERR_BAD_URL: 'BAD_REQUEST',
};

const STATUS_CODE_NAMES: Record<number, string> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  408: 'REQUEST_TIMEOUT',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE_ENTITY',
  429: 'RATE_LIMITED',
  431: 'HEADERS_TOO_LARGE',
  503: 'SERVICE_UNAVAILABLE',
};

/** Server errors kept for the onResponse log line, so a failing request still logs exactly once. */
export type ErrorSink = WeakMap<FastifyRequest, unknown>;

export interface ErrorHandlingOptions {
  sink?: ErrorSink;
  /** `retry-after` for a 503 whose error names no delay of its own (the shutdown grace period). */
  unavailableRetryAfterMs?: number;
}

export function errorBody(
  statusCode: number,
  code: string,
  message: string,
  details?: readonly ErrorDetail[],
): ErrorBody {
  const body: ErrorBody = { statusCode, code, error: STATUS_CODES[statusCode] ?? 'Error', message };
  if (details !== undefined) body.details = [...details];
  return body;
}

/** A validation issue as fastify-type-provider-zod reports it: zod's code as `keyword`, its fields in `params`. */
interface ValidationIssue {
  keyword?: string;
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** What was validated: the route's schema for that part of the request, and the value it was given. */
export interface ValidatedPart {
  schema?: unknown;
  data?: unknown;
}

function valueAt(data: unknown, segments: readonly string[]): unknown {
  let value = data;
  for (const key of segments) value = typeof value === 'object' && value !== null ? (value as never)[key] : undefined;
  return value;
}

function unknownField(key: string, allowed: readonly string[] | undefined): string {
  const hint = allowed === undefined ? undefined : closestKey(key, allowed);
  return hint === undefined ? `unknown field "${key}"` : `unknown field "${key}"; did you mean "${hint}"?`;
}

/** Turns schema-validation issues into `{ path: 'root.steps.0.agent', message }` entries in plain words. */
export function validationDetails(
  issues: readonly ValidationIssue[],
  context: string | undefined,
  part: ValidatedPart = {},
): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const issue of issues) {
    const segments = (issue.instancePath ?? '').split('/').filter((s) => s !== '');
    // The body is the document itself; other sources are prefixed so `limit` reads `querystring.limit`.
    const prefix = context && context !== 'body' ? [context] : [];
    const base = [...prefix, ...segments];
    const keys = issue.params?.keys;
    if (Array.isArray(keys) && keys.length > 0) {
      const allowed = allowedKeysAt(part.schema, segments, part.data);
      for (const key of keys.map(String)) {
        details.push({ path: [...base, key].join('.'), message: unknownField(key, allowed) });
      }
      continue;
    }
    const message = plainMessage(
      { ...issue.params, code: issue.keyword, message: issue.message },
      { present: valueAt(part.data, segments) !== undefined, field: segments.at(-1) },
    );
    details.push({ path: base.length > 0 ? base.join('.') : (context ?? 'body'), message });
  }
  return details;
}

const VALIDATED_PARTS = ['body', 'querystring', 'params', 'headers'] as const;

function validatedPart(request: FastifyRequest, context: string | undefined): ValidatedPart {
  const part = VALIDATED_PARTS.find((p) => p === context);
  if (part === undefined) return {};
  const data = { body: request.body, querystring: request.query, params: request.params, headers: request.headers };
  return { schema: request.routeOptions.schema?.[part], data: data[part] };
}

/** Fastify's own client errors, reworded to say what to send instead. */
function transportMessage(e: Partial<FastifyError> & InvalidJsonError, request: FastifyRequest): string | undefined {
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE': {
      const sent = (request.headers['content-type'] ?? '').split(';')[0]?.trim().slice(0, 100);
      const what = sent ? `content-type ${JSON.stringify(sent)} is not supported` : 'the body has no content-type';
      return `${what}: send content-type: application/json`;
    }
    case 'FST_ERR_CTP_INVALID_JSON_BODY': {
      if (e.invalidJson?.kind === 'forbidden-key') {
        return 'body must not contain __proto__ or constructor.prototype keys';
      }
      const at = e.invalidJson?.at;
      if (at === undefined) return 'body is not valid JSON';
      const what = at.found === undefined ? 'end of input' : JSON.stringify(at.found);
      const expected = at.expected === undefined ? '' : ` (${at.expected})`;
      return `body is not valid JSON: unexpected ${what} at line ${at.line}, column ${at.column}${expected}`;
    }
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return `body is larger than this route's limit of ${request.routeOptions.bodyLimit} bytes`;
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'body is empty but content-type is application/json: send a JSON document, or no content-type';
    case 'FST_ERR_BAD_URL':
      // Fastify's message repeats the whole path; the client has it already.
      return 'the URL path is not valid percent-encoded UTF-8 (a % must start an escape such as %2F)';
    default:
      return undefined;
  }
}

export function summarize(details: readonly ErrorDetail[]): string {
  const [first] = details;
  if (!first) return 'invalid request';
  const more = details.length > 1 ? ` (and ${details.length - 1} more)` : '';
  return `${first.path}: ${first.message}${more}`;
}

/** Only details of the one public shape leave; anything else an error carries stays internal. */
function isDetailList(value: unknown): value is ErrorDetail[] {
  return (
    Array.isArray(value) &&
    value.every(
      (d) =>
        typeof d === 'object' &&
        d !== null &&
        typeof (d as ErrorDetail).path === 'string' &&
        typeof (d as ErrorDetail).message === 'string',
    )
  );
}

/**
 * The stores name the parameter they reject (`cursor`); on the wire it is a query parameter, so
 * its path gets the `querystring.` prefix schema validation gives every other one.
 */
export function asQueryError(err: unknown): never {
  if (err instanceof ValidationError && err.details !== undefined) {
    const details = err.details.map((d) => ({ path: `querystring.${d.path}`, message: d.message }));
    throw new ValidationError(summarize(details), details);
  }
  throw err;
}

function retryAfterSeconds(ms: number): string {
  return String(Math.max(1, Math.ceil(ms / 1000)));
}

export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  err: unknown,
  options: ErrorHandlingOptions = {},
): FastifyReply {
  const e = err as Partial<FastifyError> &
    InvalidJsonError & { validation?: ValidationIssue[]; validationContext?: string };

  if (Array.isArray(e.validation)) {
    const details = validationDetails(e.validation, e.validationContext, validatedPart(request, e.validationContext));
    return reply.code(400).send(errorBody(400, 'VALIDATION_ERROR', summarize(details), details));
  }

  if (err instanceof AppError && err.statusCode < 500) {
    if (err.retryAfterMs !== undefined) reply.header('retry-after', retryAfterSeconds(err.retryAfterMs));
    const details = isDetailList(err.details) ? err.details : undefined;
    let message = err.message;
    if (err.code === 'VALIDATION_ERROR' && details !== undefined) {
      // The engine's messages may not name a field; the summary always does.
      if (!details.some((d) => message.includes(d.path))) message = summarize(details);
    }
    return reply.code(err.statusCode).send(errorBody(err.statusCode, err.code, message, details));
  }

  const status = typeof e.statusCode === 'number' ? e.statusCode : 500;
  if (!(err instanceof AppError) && status >= 400 && status < 500) {
    // Fastify's own client errors (parser, body limit, media type) have safe messages; a foreign
    // error's message is not known to be, so it gets the status text instead.
    const code = (e.code && FASTIFY_CODES[e.code]) ?? STATUS_CODE_NAMES[status] ?? 'BAD_REQUEST';
    const own = typeof e.code === 'string' && e.code.startsWith('FST_') && typeof e.message === 'string';
    const message =
      transportMessage(e, request) ?? (own ? (e.message as string) : (STATUS_CODES[status] ?? 'bad request'));
    return reply.code(status).send(errorBody(status, code, message));
  }

  if (err instanceof AppError && err.statusCode === 503) {
    // Unavailability is a state, not a bug: keep its code so clients can back off.
    const retryAfterMs = err.retryAfterMs ?? options.unavailableRetryAfterMs ?? 1000;
    reply.header('retry-after', retryAfterSeconds(retryAfterMs));
    return reply.code(503).send(errorBody(503, err.code, 'service unavailable; retry later'));
  }
  options.sink?.set(request, err);
  // A run-time code that reached a request (a provider failure, a timeout) keeps its code and status
  // (ERROR_CODES); a foreign error is a bug: INTERNAL. Neither leaks its message.
  if (err instanceof AppError)
    return reply.code(err.statusCode).send(errorBody(err.statusCode, err.code, 'internal error'));
  return reply.code(500).send(errorBody(500, 'INTERNAL', 'internal error'));
}

/**
 * Fastify's `frameworkErrors`: the router answers a malformed percent escape and a path parameter
 * longer than `maxParamLength` before any hook or route runs, with a body of its own (its internal
 * code, the whole path echoed, a 414 the table does not have). Handed here, they leave through the
 * same mapping and request log line as every other answer; an over-long parameter is the 400 a
 * route's own schema would give it.
 */
export function routingErrorHandler(
  options: ErrorHandlingOptions & { maxParamLength: number },
): (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => FastifyReply {
  return (err, request, reply) => {
    if (err.code !== 'FST_ERR_MAX_PARAM_LENGTH') return sendError(request, reply, err, options);
    const message = `a path parameter is longer than ${options.maxParamLength} characters`;
    return sendError(request, reply, new ValidationError(`params: ${message}`, [{ path: 'params', message }]), options);
  };
}

export function registerErrorHandling(app: FastifyInstance, options: ErrorHandlingOptions): void {
  app.setErrorHandler((err, request, reply) => sendError(request, reply, err, options));
  app.setNotFoundHandler((request, reply) => {
    const path = (request.url.split('?')[0] ?? '').slice(0, 200);
    return reply.code(404).send(errorBody(404, 'NOT_FOUND', `Route ${request.method} ${path} not found`));
  });
}
