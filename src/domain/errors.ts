import { redactSecrets } from './redact.js';

/**
 * One error base for the whole service (DESIGN §2). `code` is UPPER_SNAKE and stable: clients and
 * the HTTP mapping key on it. A failed workflow stores `{ code, message, details? }` of the error that ended it.
 */
export type ErrorCode =
  | 'VALIDATION_ERROR'
  | 'UNAUTHORIZED'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'NOT_TERMINAL'
  | 'WORKFLOW_TERMINAL'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'PAYLOAD_TOO_LARGE'
  | 'RATE_LIMITED'
  | 'TOO_MANY_STREAMS'
  | 'SHUTTING_DOWN'
  | 'INTERNAL'
  // run-time node and workflow failures
  | 'CANCELLED'
  | 'NODE_TIMEOUT'
  | 'WORKFLOW_TIMEOUT'
  | 'MAX_TURNS_EXCEEDED'
  | 'LLM_CALL_LIMIT_EXCEEDED'
  | 'LIMIT_EXCEEDED'
  | 'OUTPUT_TOO_LARGE'
  | 'MISSING_CONTEXT'
  | 'INVALID_RESPONSE_FORMAT'
  | 'VALIDATION_FAILED'
  | 'UNKNOWN_MODEL'
  | 'UNKNOWN_TOOL'
  | 'PROVIDER_NOT_CONFIGURED'
  | 'CHILD_WORKFLOW_FAILED'
  // provider error classes (DESIGN §5.1), prefixed so they read well in a failed workflow
  | 'LLM_RATE_LIMIT'
  | 'LLM_OVERLOADED'
  | 'LLM_TIMEOUT'
  | 'LLM_CONNECTION'
  | 'LLM_SERVER_ERROR'
  | 'LLM_BAD_RESPONSE'
  | 'LLM_AUTHENTICATION'
  | 'LLM_PERMISSION'
  | 'LLM_QUOTA'
  | 'LLM_INVALID_REQUEST';

export interface AppErrorOptions {
  statusCode?: number;
  retryable?: boolean;
  retryAfterMs?: number;
  details?: unknown;
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  readonly details: unknown;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.statusCode = options.statusCode ?? 500;
    this.retryable = options.retryable ?? false;
    this.retryAfterMs = options.retryAfterMs;
    this.details = options.details;
  }

  /** The persisted / API shape of a failure; provider texts may quote secrets, so it is redacted. */
  toJSON(): ErrorInfo {
    return { code: this.code, message: redactSecrets(this.message) };
  }
}

export interface ErrorInfo {
  code: string;
  message: string;
  /** Structured facts about the failure, e.g. `{ retryAfterMs }` of a rate limit. */
  details?: Record<string, unknown>;
}

/** The one shape of error details on the wire (DESIGN §11): which field, and what is wrong with it. */
export interface ErrorDetail {
  /** Dotted, from the document root: `root.steps.0.agent`, `querystring.limit`. */
  path: string;
  message: string;
}

export class ValidationError extends AppError {
  declare readonly details: readonly ErrorDetail[] | undefined;

  constructor(message: string, details?: readonly ErrorDetail[]) {
    super('VALIDATION_ERROR', message, { statusCode: 400, details });
  }
}

export class NotFoundError extends AppError {
  constructor(what: string) {
    super('NOT_FOUND', `${what} not found`, { statusCode: 404 });
  }
}

/**
 * A provider failure, already classified by the adapter (DESIGN §5.1). The executor's single
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
  | 'authentication'
  | 'permission'
  | 'quota'
  | 'invalid_request';

const KIND_CODE: Record<ProviderErrorKind, ErrorCode> = {
  rate_limit: 'LLM_RATE_LIMIT',
  overloaded: 'LLM_OVERLOADED',
  timeout: 'LLM_TIMEOUT',
  connection: 'LLM_CONNECTION',
  server: 'LLM_SERVER_ERROR',
  bad_response: 'LLM_BAD_RESPONSE',
  authentication: 'LLM_AUTHENTICATION',
  permission: 'LLM_PERMISSION',
  quota: 'LLM_QUOTA',
  invalid_request: 'LLM_INVALID_REQUEST',
};

const RETRYABLE_KINDS: ReadonlySet<ProviderErrorKind> = new Set([
  'rate_limit',
  'overloaded',
  'timeout',
  'connection',
  'server',
  // A garbled body is a transport accident like a 5xx: the same request usually succeeds next time.
  'bad_response',
]);

export class ProviderError extends AppError {
  readonly kind: ProviderErrorKind;
  readonly httpStatus: number | undefined;

  constructor(
    kind: ProviderErrorKind,
    message: string,
    options: { httpStatus?: number; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(KIND_CODE[kind], message, {
      statusCode: 502,
      retryable: RETRYABLE_KINDS.has(kind),
      retryAfterMs: options.retryAfterMs,
      cause: options.cause,
    });
    this.name = 'ProviderError';
    this.kind = kind;
    this.httpStatus = options.httpStatus;
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
 * classification rules of DESIGN §5.1 live in one place.
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
