import type { LightMyRequestResponse } from 'fastify';
import { ErrorBodySchema } from '../../src/api/http/schemas.js';
import { ERROR_CODES, type ErrorCode } from '../../src/domain/errors.js';
import type { FuzzRequest } from './fuzz-requests.js';

/** The properties every answer of the route fuzz keeps, and the prototype-pollution probes. */

/** A V8 stack frame, a source path, Node's internals, or the checkout's own directory. */
const LEAKS = [
  /^\s*at .*:\d+:\d+\)?$/m,
  /node:internal/,
  /\/(?:src|node_modules)\/[\w./@-]+\.(?:ts|js|mjs|cjs)\b/,
  /file:\/\//,
  new RegExp(process.cwd().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
];
/** Error class names and engine messages a client should never read. */
const INTERNAL_WORDS = /Maximum call stack|RangeError|TypeError|ReferenceError|SyntaxError:|SQLITE_|better-sqlite3/;

const StrictErrorBody = ErrorBodySchema.strict();

function snippet(res: LightMyRequestResponse): string {
  return `${res.statusCode} ${res.headers['content-type'] ?? '(no content-type)'} ${res.body.slice(0, 400)}`;
}

/** Throws (the property fails) when an answer breaks one of the suite's rules. */
export function checkAnswer(res: LightMyRequestResponse, request: Pick<FuzzRequest, 'paramsValid'>): void {
  if (res.statusCode >= 500) throw new Error(`a 5xx: ${snippet(res)}`);
  const contentType = String(res.headers['content-type'] ?? '');
  const isJson = contentType.startsWith('application/json');
  if (res.statusCode >= 400) {
    if (!isJson) throw new Error(`a 4xx that is not JSON: ${snippet(res)}`);
    const parsed = StrictErrorBody.safeParse(JSON.parse(res.body));
    if (!parsed.success) throw new Error(`a 4xx not of the error shape (${parsed.error.message}): ${snippet(res)}`);
    const { statusCode, code, details } = parsed.data;
    if (statusCode !== res.statusCode) throw new Error(`statusCode differs from the status: ${snippet(res)}`);
    // The code is the public contract: one of the table's (ERROR_CODES), with the table's status.
    if (!Object.hasOwn(ERROR_CODES, code) || ERROR_CODES[code as ErrorCode].status !== statusCode) {
      throw new Error(`a 4xx whose code is not the table's for its status: ${snippet(res)}`);
    }
    // What the OpenAPI document says a path or header parameter may be, the service takes (a 422
    // for a reused idempotency key is about the state, not the value). Not the query: a cursor is
    // an opaque token its schema can only bound.
    const blamed = statusCode === 400 && details?.find((d) => /^(?:params|headers)\b/.test(d.path));
    if (request.paramsValid && (statusCode === 414 || blamed)) {
      throw new Error(`parameters valid by the route's schema refused: ${snippet(res)}`);
    }
    if (INTERNAL_WORDS.test(res.body)) throw new Error(`a 4xx with internal text: ${snippet(res)}`);
  }
  // Served files (the dashboard's JS, Swagger UI) are code, not answers: only generated bodies are read.
  if (isJson || res.statusCode >= 300 || contentType.startsWith('text/plain')) {
    const leak = LEAKS.find((pattern) => pattern.test(res.body));
    if (leak) throw new Error(`a body with a stack trace or source path (${leak}): ${snippet(res)}`);
  }
}

type Snapshot = Map<object, Map<string | symbol, unknown>>;

const PROTOTYPES: readonly object[] = [Object.prototype, Array.prototype, Function.prototype, String.prototype];

/** Every own property (value or accessor) of the built-in prototypes a pollution would reach. */
export function snapshotPrototypes(prototypes: readonly object[] = PROTOTYPES): Snapshot {
  const snapshot: Snapshot = new Map();
  for (const proto of prototypes) {
    const props = new Map<string | symbol, unknown>();
    for (const key of Reflect.ownKeys(proto)) {
      const d = Object.getOwnPropertyDescriptor(proto, key);
      props.set(key, d && ('value' in d ? d.value : `${String(d.get)}|${String(d.set)}`));
    }
    snapshot.set(proto, props);
  }
  return snapshot;
}

const PROBES = ['polluted', 'isAdmin', 'x', 'a', 'b'];

/**
 * Throws when a prototype of `before` gained, lost or changed a property, or a probe on a fresh
 * object reads through to one. Cheap enough for Object.prototype after every request.
 */
export function checkPrototypes(before: Snapshot): void {
  const probe = {} as Record<string, unknown>;
  for (const name of PROBES) {
    if (probe[name] !== undefined) throw new Error(`({}).${name} is ${String(probe[name])}: Object.prototype polluted`);
  }
  const now = snapshotPrototypes([...before.keys()]);
  for (const [proto, props] of before) {
    const after = now.get(proto) as Map<string | symbol, unknown>;
    for (const [key, value] of after) {
      if (!props.has(key) || props.get(key) !== value)
        throw new Error(`prototype property ${String(key)} added or changed`);
    }
    if (after.size !== props.size) throw new Error('a prototype property was removed');
  }
}
