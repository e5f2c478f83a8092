/**
 * Plain words for schema-validation issues (docs/design.md#http-api-conventions). zod writes for developers ("Invalid
 * input:
 * expected string, received undefined"); the person reading a 400 wants "is required". Used by the
 * one HTTP error mapping (error-handler.ts), which adds the path.
 */

/** A zod issue: its code and message, plus the code's own fields (expected, values, minimum, …). */
export interface ZodIssueLike {
  code?: string;
  message?: string;
  path?: readonly PropertyKey[];
  [field: string]: unknown;
}

/** What the request held at the issue's path: `present` is false when the field is missing. */
export interface FieldContext {
  present: boolean;
  /** The last path segment, for names that say more than a type ("agents"). */
  field: string | undefined;
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  bigint: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  record: 'an object',
  array: 'an array',
  tuple: 'an array',
  date: 'a date',
  null: 'null',
};

/** Records whose keys are names of something: the error says what, not just "an object". */
const RECORD_KEYS: Record<string, string> = { agents: 'agent name' };

const FORMAT_WORDS: Record<string, string> = {
  datetime: 'an ISO-8601 date-time such as 2025-01-31T12:00:00Z',
  date: 'an ISO-8601 date such as 2025-01-31',
  email: 'an email address',
  url: 'a URL',
  uuid: 'a UUID',
};

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
const list = (values: readonly unknown[]): string => values.map((v) => String(v)).join(', ');

function sizeLimit(issue: ZodIssueLike, bound: 'least' | 'most'): string {
  const limit = Number(bound === 'least' ? issue.minimum : issue.maximum);
  const exactly = issue.exact === true ? 'exactly' : `at ${bound}`;
  switch (issue.origin) {
    case 'string':
      return `must be ${exactly} ${plural(limit, 'character')}`;
    case 'array':
    case 'set':
      return `must have ${exactly} ${plural(limit, 'item')}`;
    default:
      if (issue.inclusive === false) return `must be ${bound === 'least' ? 'greater' : 'less'} than ${limit}`;
      return `must be ${exactly} ${limit}`;
  }
}

/** zod's default messages start with "Invalid"; a schema's own message (a regex's) is already words. */
const isZodDefault = (message: string | undefined): boolean => message === undefined || /^Invalid\b/.test(message);

/**
 * A union tried every member: when they all fail the same way the reason is clear; otherwise the
 * value simply matches none of them.
 */
function unionMessage(issue: ZodIssueLike, at: FieldContext): string {
  if (Array.isArray(issue.options) && issue.options.length > 0) {
    return at.present ? `must be one of ${list(issue.options)}` : `is required: one of ${list(issue.options)}`;
  }
  const branches = Array.isArray(issue.errors) ? (issue.errors as ZodIssueLike[][]) : [];
  const reasons = new Set(
    branches.map((b) => (b.length === 1 && b[0]?.path?.length === 0 ? plainMessage(b[0], at) : undefined)),
  );
  const [only] = reasons;
  return reasons.size === 1 && only !== undefined ? only : 'does not match any of the accepted forms';
}

export function plainMessage(issue: ZodIssueLike, at: FieldContext): string {
  switch (issue.code) {
    case 'invalid_type': {
      if (!at.present) return 'is required';
      const keys = issue.expected === 'record' && at.field !== undefined ? RECORD_KEYS[at.field] : undefined;
      if (keys !== undefined) return `must be an object keyed by ${keys}`;
      return `must be ${TYPE_WORDS[String(issue.expected)] ?? String(issue.expected)}`;
    }
    case 'invalid_union':
      return unionMessage(issue, at);
    case 'invalid_value': {
      const values = Array.isArray(issue.values) ? issue.values : [];
      return values.length === 1 ? `must be ${JSON.stringify(values[0])}` : `must be one of ${list(values)}`;
    }
    case 'too_small':
      return sizeLimit(issue, 'least');
    case 'too_big':
      return sizeLimit(issue, 'most');
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`;
    case 'invalid_format': {
      if (!isZodDefault(issue.message)) return issue.message as string;
      const words = FORMAT_WORDS[String(issue.format)];
      return words === undefined ? 'has the wrong format' : `must be ${words}`;
    }
    case 'invalid_key': {
      const [first] = Array.isArray(issue.issues) ? (issue.issues as ZodIssueLike[]) : [];
      return first === undefined ? 'is not a valid key' : `is not a valid key: ${plainMessage(first, at)}`;
    }
    default:
      return isZodDefault(issue.message) ? 'is invalid' : (issue.message as string);
  }
}
