import { z } from 'zod';
import type { RetryReason } from './metrics.js';
import { redactSecrets } from './redact.js';

/**
 * What every error code means, in one table (docs/design.md#architecture-and-floors, docs/design.md#house-style): the
 * HTTP status it answers with, whether
 * the transport retry layer retries it, whether workflow-level reflection may retry the node it
 * failed, the seed's retry reason it is counted under, and the outcome reason of a workflow it ends.
 * No throw site chooses any of these: it names a code. `code` is UPPER_SNAKE and stable.
 */
export interface CodeMeaning {
  /** The HTTP status when the error answers a request (a failed workflow is data: 200). */
  status: number;
  /** The single transport-retry layer retries a provider call that failed with it. */
  retryable: boolean;
  /** Workflow-level reflection may ask the agent and retry the node (docs/design.md#three-levels-of-reflection). */
  reflectable: boolean;
  /** Prompt-level reflection re-asks in the same conversation: the answer itself was unusable. */
  reAsk?: true;
  /** The seed's retry reason a retry caused by it is counted under (efficiency `retry_reasons`). */
  retryReason: RetryReason;
  /** What it makes of a workflow it fails (docs/design.md#events-spans-metrics-and-rewards outcome rules). */
  outcome: 'tests_failed' | 'dependency_missing' | 'timeout' | 'review_blocked' | 'error_unrecoverable';
}

const request = (status: number): CodeMeaning => ({
  status,
  retryable: false,
  reflectable: false,
  retryReason: 'test_failure',
  outcome: 'error_unrecoverable',
});
const run = (meaning: Partial<CodeMeaning>): CodeMeaning => ({ ...request(500), ...meaning });
/** A provider class that reaches a node only after the transport retries gave up: never reflected on. */
const transport = (retryReason: RetryReason): CodeMeaning =>
  run({ status: 502, retryable: true, retryReason, outcome: 'error_unrecoverable' });
/** A provider class no retry or better answer can fix: a missing key, a refused request. */
const fatal = (outcome: CodeMeaning['outcome']): CodeMeaning => run({ status: 502, outcome });

export const ERROR_CODES = {
  // request-level codes: what a client sent, or the state of the service
  VALIDATION_ERROR: request(400),
  BAD_REQUEST: request(400),
  INVALID_JSON: request(400),
  UNAUTHORIZED: request(401),
  FORBIDDEN: request(403),
  NOT_FOUND: request(404),
  METHOD_NOT_ALLOWED: request(405),
  NOT_ACCEPTABLE: request(406),
  REQUEST_TIMEOUT: request(408),
  CONFLICT: request(409),
  NOT_TERMINAL: request(409),
  WORKFLOW_TERMINAL: request(409),
  PAYLOAD_TOO_LARGE: request(413),
  UNSUPPORTED_MEDIA_TYPE: request(415),
  IDEMPOTENCY_KEY_REUSED: request(422),
  UNPROCESSABLE_ENTITY: request(422),
  RATE_LIMITED: request(429),
  TOO_MANY_STREAMS: request(429),
  HEADERS_TOO_LARGE: request(431),
  INTERNAL: request(500),
  SHUTTING_DOWN: request(503),
  // Scaled out: this instance no longer holds the run's lease (docs/operations.md#scale-out); the new holder resumes it.
  LEASE_LOST: request(503),
  // Scaled out: the run gave its lease back to wait longer than a lease lasts (a long retry-after);
  // a background job resumes it at its time, on whichever instance claims it then.
  RUN_PARKED: request(503),
  SERVICE_UNAVAILABLE: request(503),
  // run-time node and workflow failures (409: a cancel or a limit, were they ever to answer a request)
  CANCELLED: run({ status: 409, outcome: 'timeout' }),
  NODE_TIMEOUT: run({ status: 504, reflectable: true, retryReason: 'timeout', outcome: 'timeout' }),
  WORKFLOW_TIMEOUT: run({ status: 504, retryReason: 'timeout', outcome: 'timeout' }),
  MAX_TURNS_EXCEEDED: run({ reflectable: true }),
  INVALID_ACTION: run({ reflectable: true }),
  // A person said no before the run: a review that blocked it (and, metrics/final.ts, no reward).
  CHECKPOINT_REJECTED: run({ status: 409, outcome: 'review_blocked' }),
  LLM_CALL_LIMIT_EXCEEDED: run({ status: 409 }),
  // The tenant's real-money budget for the UTC day (TENANT_DAILY_BUDGET_USD) cannot pay for the call's
  // worst case: refused before it is sent. Neither retried nor reflected on (both would be calls).
  TENANT_BUDGET_EXCEEDED: run({ status: 429, retryReason: 'rate_limit' }),
  LIMIT_EXCEEDED: run({ status: 409 }),
  OUTPUT_TOO_LARGE: run({ status: 409 }),
  CONVERSATION_TOO_LARGE: run({ status: 409 }),
  MISSING_CONTEXT: run({ status: 400, retryReason: 'dependency_conflict', outcome: 'dependency_missing' }),
  INVALID_RESPONSE_FORMAT: run({ reflectable: true, reAsk: true, outcome: 'tests_failed' }),
  VALIDATION_FAILED: run({ reflectable: true, reAsk: true, outcome: 'tests_failed' }),
  UNKNOWN_MODEL: run({ status: 400, retryReason: 'dependency_conflict', outcome: 'dependency_missing' }),
  UNKNOWN_TOOL: run({ reflectable: true, retryReason: 'dependency_conflict', outcome: 'dependency_missing' }),
  PROVIDER_NOT_CONFIGURED: run({ status: 400, retryReason: 'dependency_conflict', outcome: 'dependency_missing' }),
  CHILD_WORKFLOW_FAILED: run({ reflectable: true }),
  // A review node's panel rejected the work (docs/design.md#complexity-allocation-selection-and-review). Not
  // reflectable: asking the same reviewers
  // about the same output again (answered from the cache, at that) would not change the verdict.
  REVIEW_BLOCKED: run({ status: 422, retryReason: 'review_rejection', outcome: 'review_blocked' }),
  // provider error classes (docs/design.md#transport-retries), prefixed so they read well in a failed workflow
  LLM_RATE_LIMIT: transport('rate_limit'),
  LLM_OVERLOADED: transport('rate_limit'),
  LLM_TIMEOUT: transport('timeout'),
  LLM_CONNECTION: transport('timeout'),
  LLM_SERVER_ERROR: transport('timeout'),
  // A garbled body is a transport accident like a 5xx: the same request usually succeeds next time.
  LLM_BAD_RESPONSE: transport('timeout'),
  LLM_AUTHENTICATION: fatal('dependency_missing'),
  LLM_PERMISSION: fatal('dependency_missing'),
  // Quota exhaustion is throttling the account, not this request: counted as a rate limit.
  LLM_QUOTA: { ...fatal('dependency_missing'), retryReason: 'rate_limit' },
  LLM_INVALID_REQUEST: fatal('error_unrecoverable'),
} as const satisfies Record<string, CodeMeaning>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The meaning of a code; unknown codes (a stored record from another build) read as INTERNAL. */
export function meaningOf(code: string): CodeMeaning {
  return Object.hasOwn(ERROR_CODES, code) ? ERROR_CODES[code as ErrorCode] : ERROR_CODES.INTERNAL;
}

export interface AppErrorOptions {
  retryAfterMs?: number;
  details?: unknown;
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly retryAfterMs: number | undefined;
  readonly details: unknown;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.retryAfterMs = options.retryAfterMs;
    this.details = options.details;
  }

  /** The HTTP status of its code (ERROR_CODES): no throw site chooses one. */
  get statusCode(): number {
    return ERROR_CODES[this.code].status;
  }

  /** Whether the transport retry layer retries it (ERROR_CODES). */
  get retryable(): boolean {
    return ERROR_CODES[this.code].retryable;
  }

  /** The persisted / API shape of a failure; provider texts may quote secrets, so it is redacted. */
  toJSON(): ErrorInfo {
    return { code: this.code, message: redactSecrets(this.message) };
  }
}

/** The persisted and API shape of a failure, declared once (stored rows are parsed through it). */
export const ErrorInfoSchema = z
  .object({
    code: z.string(),
    message: z.string(),
    details: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('Structured facts about the failure, e.g. `{ retryAfterMs }` of a rate limit.'),
  })
  .describe('ErrorInfo');
export type ErrorInfo = z.infer<typeof ErrorInfoSchema>;

/**
 * The one shape of error details on the wire (docs/design.md#http-api-conventions): which field, and what is wrong
 * with it.
 */
export interface ErrorDetail {
  /** Dotted, from the document root: `root.steps.0.agent`, `querystring.limit`. */
  path: string;
  message: string;
}

export class ValidationError extends AppError {
  declare readonly details: readonly ErrorDetail[] | undefined;

  constructor(message: string, details?: readonly ErrorDetail[]) {
    super('VALIDATION_ERROR', message, { details });
  }
}

export class NotFoundError extends AppError {
  constructor(what: string) {
    super('NOT_FOUND', `${what} not found`);
  }
}

/**
 * A provider failure, already classified by the adapter (docs/design.md#transport-retries). The executor's single
 * transport-retry layer decides from `kind` alone whether to retry.
 */
export type ProviderErrorKind =
  | 'rate_limit'
  | 'overloaded'
  | 'timeout'
  | 'connection'
  | 'server'
  /** A 2xx whose body is not valid JSON or not the expected shape (or has nothing to use). */
  | 'bad_response'
  /** A body past the byte cap: LLM_BAD_RESPONSE too, but never retried (the same body would come back). */
  | 'oversized_response'
  | 'authentication'
  | 'permission'
  | 'quota'
  | 'invalid_request';

const KIND_CODE = {
  rate_limit: 'LLM_RATE_LIMIT',
  overloaded: 'LLM_OVERLOADED',
  timeout: 'LLM_TIMEOUT',
  connection: 'LLM_CONNECTION',
  server: 'LLM_SERVER_ERROR',
  bad_response: 'LLM_BAD_RESPONSE',
  oversized_response: 'LLM_BAD_RESPONSE',
  authentication: 'LLM_AUTHENTICATION',
  permission: 'LLM_PERMISSION',
  quota: 'LLM_QUOTA',
  invalid_request: 'LLM_INVALID_REQUEST',
} as const satisfies Record<ProviderErrorKind, ErrorCode>;

export class ProviderError extends AppError {
  readonly kind: ProviderErrorKind;
  readonly httpStatus: number | undefined;

  constructor(
    kind: ProviderErrorKind,
    message: string,
    options: { httpStatus?: number; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(KIND_CODE[kind], message, { retryAfterMs: options.retryAfterMs, cause: options.cause });
    this.name = 'ProviderError';
    this.kind = kind;
    this.httpStatus = options.httpStatus;
  }

  /** As its code says (ERROR_CODES), except an oversized body: asking again would download it again. */
  override get retryable(): boolean {
    return this.kind !== 'oversized_response' && super.retryable;
  }

  /** The wait the provider asked for is kept with the failure: it says when trying again makes sense. */
  override toJSON(): ErrorInfo {
    const info = super.toJSON();
    if (this.retryAfterMs !== undefined) info.details = { retryAfterMs: this.retryAfterMs };
    return info;
  }
}

/**
 * Maps an HTTP status and message to a provider error kind; shared by every adapter so the
 * classification rules of docs/design.md#transport-retries live in one place.
 */
export function classifyHttpFailure(status: number, message: string): ProviderErrorKind {
  const billing = /credit|quota|billing/i.test(message);
  if (status === 402 || ((status === 400 || status === 429) && billing)) return 'quota';
  if (status === 429) return 'rate_limit';
  if (status === 529 || status === 503) return 'overloaded';
  if (status === 408 || status === 504) return 'timeout';
  if (status === 401) return 'authentication';
  if (status === 403) return 'permission';
  if (status >= 500) return 'server';
  return 'invalid_request';
}

export function toErrorInfo(err: unknown): ErrorInfo {
  if (err instanceof AppError) return err.toJSON();
  return { code: 'INTERNAL', message: 'internal error' };
}

/** A failure a node recorded, raised again as it was (a reopened run replays a final failure). */
export function fromErrorInfo(info: ErrorInfo): AppError {
  const code = Object.hasOwn(ERROR_CODES, info.code) ? (info.code as ErrorCode) : 'INTERNAL';
  return new AppError(code, info.message, info.details === undefined ? {} : { details: info.details });
}
