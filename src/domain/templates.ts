import { AppError } from './errors.js';

/**
 * `{{input.<path>}}` and `{{steps.<name>.output[.<path>]}}` (docs/design.md#workflow-definitions). A string that is
 * exactly one
 * template renders to the raw value (so `data` keeps JSON types); templates inside longer text are
 * interpolated (strings as they are, anything else as JSON).
 */
const TEMPLATE = /\{\{\s*([^{}]+?)\s*\}\}/g;
const WHOLE = /^\{\{\s*([^{}]+?)\s*\}\}$/;
const STEP_REF = /^steps\.([A-Za-z0-9_-]+)\.output(?:\.(.+))?$/;
const INPUT_REF = /^input(?:\.(.+))?$/;

export type TemplateRef =
  | { kind: 'input'; path: string[]; raw: string }
  | { kind: 'step'; step: string; path: string[]; raw: string }
  | { kind: 'invalid'; raw: string };

function splitPath(path: string | undefined): string[] {
  return path ? path.split('.') : [];
}

export function parseRef(expression: string): TemplateRef {
  const step = STEP_REF.exec(expression);
  if (step) return { kind: 'step', step: step[1] as string, path: splitPath(step[2]), raw: expression };
  const input = INPUT_REF.exec(expression);
  if (input) return { kind: 'input', path: splitPath(input[1]), raw: expression };
  return { kind: 'invalid', raw: expression };
}

/** Every template reference in a string. */
export function refsIn(text: string): TemplateRef[] {
  const refs: TemplateRef[] = [];
  for (const match of text.matchAll(TEMPLATE)) refs.push(parseRef(match[1] as string));
  return refs;
}

/** Calls `visit` for every string inside a JSON value, with its path. */
export function forEachString(value: unknown, path: string, visit: (text: string, path: string) => void): void {
  if (typeof value === 'string') visit(value, path);
  else if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) forEachString(item, `${path}.${i}`, visit);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) forEachString(item, `${path}.${key}`, visit);
  }
}

export const MISSING = Symbol('missing');

/** Follows a dotted path; array indexes are plain numbers. */
export function lookup(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return MISSING;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

export interface TemplateScope {
  input: unknown;
  /** The output of a completed step, or MISSING when that step has not completed. */
  stepOutput(name: string): unknown;
}

function resolve(expression: string, scope: TemplateScope): unknown {
  const ref = parseRef(expression);
  let value: unknown = MISSING;
  if (ref.kind === 'input') value = lookup(scope.input, ref.path);
  else if (ref.kind === 'step') {
    const output = scope.stepOutput(ref.step);
    value = output === MISSING ? MISSING : lookup(output, ref.path);
  }
  if (value === MISSING) {
    throw new AppError('MISSING_CONTEXT', `template {{${expression}}} refers to nothing available at run time`);
  }
  return value;
}

function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export function renderString(text: string, scope: TemplateScope): unknown {
  if (!text.includes('{{')) return text;
  const whole = WHOLE.exec(text);
  if (whole) return resolve(whole[1] as string, scope);
  return text.replace(TEMPLATE, (_, expression: string) => asText(resolve(expression, scope)));
}

export function renderText(text: string, scope: TemplateScope): string {
  return asText(renderString(text, scope));
}

/** Renders every string inside a JSON value (objects and arrays are copied, never mutated). */
export function renderValue(value: unknown, scope: TemplateScope): unknown {
  if (typeof value === 'string') return renderString(value, scope);
  if (Array.isArray(value)) return value.map((item) => renderValue(item, scope));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = renderValue(item, scope);
    return out;
  }
  return value;
}
