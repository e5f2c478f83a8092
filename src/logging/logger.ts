import pino, { type DestinationStream, type Logger } from 'pino';
import { REDACTED, redactSecrets } from '../domain/redact.js';

export interface LoggerOptions {
  level: string;
  /** Where lines go; stdout when omitted. Tests pass an in-memory stream. */
  destination?: DestinationStream;
}

/** Secret-bearing fields by path (fast-redact: cheap, applied before serialization). */
const SECRET_FIELDS = ['apiKey', 'api_key', 'password', 'secret', 'token', 'authorization'];
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'headers["x-api-key"]',
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((field) => `*.${field}`),
];

/**
 * The one pino instance (docs/design.md#house-style), handed to fastify as `loggerInstance`; modules use
 * `logger.child({ module })`. Two layers of redaction (docs/design.md#security): known field paths are censored
 * structurally, and every finished line goes through `redactSecrets`, which catches keys and
 * bearer tokens inside messages, error messages, stacks and causes wherever they appear. The
 * second layer costs one regex test per line when nothing looks like a secret.
 */
export function createLogger(options: LoggerOptions): Logger {
  const pinoOptions: pino.LoggerOptions = {
    level: options.level,
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    serializers: { err: pino.stdSerializers.err },
    hooks: { streamWrite: redactSecrets },
  };
  // pino's own default destination (synchronous stdout) when none is given: no lines lost on exit.
  return options.destination ? pino(pinoOptions, options.destination) : pino(pinoOptions);
}
