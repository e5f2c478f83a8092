import { createHash } from 'node:crypto';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { LRUCache } from 'lru-cache';
import { DEFAULTS, promptNodesOf, type WorkflowNode } from '../../../domain/definition.js';
import { AppError } from '../../../domain/errors.js';
import { formatPath, tooDeepPath } from '../../../domain/json-depth.js';
import { jsonBytesWithin } from '../../../domain/json-size.js';
import type { JsonSchema } from '../../../domain/llm.js';
import { SCHEMA_BUDGET } from './schema-budget.js';
import { linearRegExp } from './user-pattern.js';

/**
 * responseFormat handling (docs/design.md#workflow-definitions): compile once per schema, parse the model's answer as
 * JSON
 * (tolerating a fenced block), validate. Failures carry the codes reflection keys on (§5). Every
 * `pattern` runs on the linear-time engine (user-pattern.ts); schemas reach this file only after
 * their budget was checked (schema-budget.ts), so compiling one costs milliseconds.
 */
const ajv = new Ajv({ allErrors: true, strict: false, code: { regExp: linearRegExp } });
// Every submission and every run brings its own schema object, so validators are shared by the
// SHA-256 of the schema's JSON (bounded), with a per-object shortcut for the hot path.
const byHash = new LRUCache<string, ValidateFunction>({ max: 1000 });
const byObject = new WeakMap<JsonSchema, ValidateFunction>();

/** A schema ajv refuses; the message is written for the person who submitted it. */
export class InvalidSchemaError extends Error {}

export function compileSchema(schema: JsonSchema): ValidateFunction {
  let validate = byObject.get(schema);
  if (validate) return validate;
  const hash = createHash('sha256').update(JSON.stringify(schema)).digest('hex');
  validate = byHash.get(hash);
  if (!validate) {
    if (!ajv.validateSchema(schema)) throw new InvalidSchemaError(describeSchemaErrors(ajv.errors ?? []));
    try {
      validate = ajv.compile(schema);
    } catch (err) {
      // ajv's own messages (an unresolvable $ref…) are about the schema; nothing else is shown.
      const message = err instanceof Error && /^(schema|can't resolve|reference)/.test(err.message) ? err.message : '';
      throw new InvalidSchemaError(message || 'cannot be compiled');
    }
    // ajv keeps its own reference to every compiled schema object; drop it so memory stays bounded.
    ajv.removeSchema(schema);
    byHash.set(hash, validate);
  }
  byObject.set(schema, validate);
  return validate;
}

const JSON_SCHEMA_TYPES = 'array, boolean, integer, null, number, object, string';

/**
 * The first meta-schema violation in plain words. ajv reports a bad `type` three times (not in the
 * enum, not an array, anyOf failed); the enum one, with the allowed types named, is the useful one.
 */
function describeSchemaErrors(errors: readonly ErrorObject[]): string {
  const typeError = errors.find((e) => e.instancePath.endsWith('/type'));
  if (typeError) return `${pointer(typeError.instancePath)} must be one of: ${JSON_SCHEMA_TYPES} (or an array of them)`;
  const first = errors.find((e) => e.keyword !== 'anyOf') ?? errors[0];
  if (!first) return 'is not a valid JSON Schema';
  return `${pointer(first.instancePath) || 'the schema'} ${first.message ?? 'is invalid'}`;
}

/** `/properties/x/type` → `properties.x.type`. */
const pointer = (instancePath: string): string => instancePath.split('/').filter(Boolean).join('.');

const FENCED = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/;

export function parseJsonAnswer(text: string): unknown {
  const fenced = FENCED.exec(text);
  const body = fenced ? (fenced[1] as string) : text;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (err) {
    throw new AppError('INVALID_RESPONSE_FORMAT', `the answer is not valid JSON: ${(err as Error).message}`, {
      cause: err,
    });
  }
  // A deep answer would overflow the stack of whatever walks it next (templates, storage).
  const deep = tooDeepPath(value, DEFAULTS.maxJsonDepth);
  if (deep) {
    throw new AppError(
      'INVALID_RESPONSE_FORMAT',
      `the answer is nested deeper than ${DEFAULTS.maxJsonDepth} levels (at ${formatPath(['answer', ...deep])})`,
    );
  }
  return value;
}

export function validateAnswer(text: string, schema: JsonSchema): unknown {
  const value = parseJsonAnswer(text);
  const validate = compileSchema(schema);
  if (!validate(value)) {
    const reasons = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
    throw new AppError('VALIDATION_FAILED', `the answer does not match responseFormat: ${reasons.join('; ')}`, {
      details: validate.errors,
    });
  }
  return value;
}

const instructions = new WeakMap<JsonSchema, string>();

/** Appended to the system prompt so real models know the contract; part of the effective request. */
export function responseFormatInstruction(schema: JsonSchema): string {
  let instruction = instructions.get(schema);
  if (instruction === undefined) {
    instruction = `Respond with only a JSON value (no prose, no code fences) that satisfies this JSON Schema:\n${JSON.stringify(schema)}`;
    instructions.set(schema, instruction);
  }
  return instruction;
}

/**
 * Identical responseFormat schemas of one definition (the same JSON text) become one object, at
 * submission, so every per-schema cache — the budget check, the compiled validator, the instruction
 * text — does its work once per distinct schema instead of once per step. A schema over the byte
 * budget is left alone without being written out: the budget check refuses it next.
 */
export function shareIdenticalSchemas(root: WorkflowNode): void {
  const byText = new Map<string, JsonSchema>();
  for (const node of promptNodesOf(root).values()) {
    if (node.responseFormat === undefined) continue;
    if (jsonBytesWithin(node.responseFormat, SCHEMA_BUDGET.bytes) === undefined) continue;
    const text = JSON.stringify(node.responseFormat);
    const first = byText.get(text);
    if (first === undefined) byText.set(text, node.responseFormat);
    else node.responseFormat = first;
  }
}
