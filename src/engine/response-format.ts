import { Ajv, type ValidateFunction } from 'ajv';
import { LRUCache } from 'lru-cache';
import { AppError } from '../domain/errors.js';
import type { JsonSchema } from '../domain/llm.js';

/**
 * responseFormat handling (DESIGN §3): compile once per schema object, parse the model's answer as
 * JSON (tolerating a fenced block), validate. Failures carry the codes reflection keys on (§5).
 */
const ajv = new Ajv({ allErrors: true, strict: false });
// Compiling is ~1 ms; every submission and every run brings its own schema object, so validators are
// shared by schema text (bounded), with a per-object shortcut for the hot path.
const byText = new LRUCache<string, ValidateFunction>({ max: 1000 });
const byObject = new WeakMap<JsonSchema, ValidateFunction>();

/** Throws a plain Error with ajv's reason when the schema itself is invalid. */
export function compileSchema(schema: JsonSchema): ValidateFunction {
  let validate = byObject.get(schema);
  if (validate) return validate;
  const text = JSON.stringify(schema);
  validate = byText.get(text);
  if (!validate) {
    validate = ajv.compile(schema);
    // ajv keeps its own reference to every compiled schema object; drop it so memory stays bounded.
    ajv.removeSchema(schema);
    byText.set(text, validate);
  }
  byObject.set(schema, validate);
  return validate;
}

const FENCED = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/;

export function parseJsonAnswer(text: string): unknown {
  const fenced = FENCED.exec(text);
  const body = fenced ? (fenced[1] as string) : text;
  try {
    return JSON.parse(body);
  } catch (err) {
    throw new AppError('INVALID_RESPONSE_FORMAT', `the answer is not valid JSON: ${(err as Error).message}`, {
      cause: err,
    });
  }
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

/** Appended to the system prompt so real models know the contract; part of the effective request. */
export function responseFormatInstruction(schema: JsonSchema): string {
  return `Respond with only a JSON value (no prose, no code fences) that satisfies this JSON Schema:\n${JSON.stringify(schema)}`;
}
