import { z } from 'zod';

/**
 * "Did you mean" for unknown fields (docs/design.md#http-api-conventions): every object of a definition is strict, so a
 * misspelt or guessed field is a 400; naming the field that was probably meant saves a trip to the
 * docs. The allowed keys come from the route's own zod schema, walked along the error's path.
 */

/** Names people reach for that are not typos of the real one. */
const SYNONYMS: Record<string, string> = {
  children: 'steps',
  nodes: 'steps',
  prompt: 'user',
  message: 'user',
};

type Data = Record<string, unknown>;
const isObject = (value: unknown): value is Data => typeof value === 'object' && value !== null;

/** The member of a union the value was meant for: a discriminated union says so by its tag. */
function memberFor(union: z.ZodUnion, value: unknown): z.ZodType | undefined {
  const options = union.options as readonly z.ZodType[];
  const discriminator = (union as z.ZodDiscriminatedUnion)._zod.def.discriminator;
  if (discriminator !== undefined && isObject(value)) {
    return options.find((option) => {
      const tag = option instanceof z.ZodObject ? option.shape[discriminator] : undefined;
      return tag instanceof z.ZodLiteral && tag.values.has(value[discriminator] as never);
    });
  }
  const objects = options.filter((option) => option instanceof z.ZodObject);
  return objects.length === 1 ? objects[0] : undefined;
}

/** Looks through wrappers (optional, default, lazy, pipe) and unions to the schema that checks `value`. */
function unwrap(schema: z.ZodType, value: unknown): z.ZodType | undefined {
  let current: z.ZodType | undefined = schema;
  for (let depth = 0; current !== undefined && depth < 32; depth++) {
    if (
      current instanceof z.ZodOptional ||
      current instanceof z.ZodNullable ||
      current instanceof z.ZodDefault ||
      current instanceof z.ZodLazy
    ) {
      current = current.unwrap() as z.ZodType;
    } else if (current instanceof z.ZodPipe) {
      current = current.in as z.ZodType;
    } else if (current instanceof z.ZodUnion) {
      current = memberFor(current, value);
    } else {
      return current;
    }
  }
  return undefined;
}

function child(schema: z.ZodType, key: string): z.ZodType | undefined {
  if (schema instanceof z.ZodObject) return schema.shape[key] as z.ZodType | undefined;
  if (schema instanceof z.ZodArray) return schema.element as z.ZodType;
  if (schema instanceof z.ZodRecord) return schema.valueType as z.ZodType;
  return undefined;
}

/** The keys the object at `path` may have, or undefined when the path leads to no object schema. */
export function allowedKeysAt(schema: unknown, path: readonly string[], data: unknown): string[] | undefined {
  if (!(schema instanceof z.ZodType)) return undefined;
  let value = data;
  let current = unwrap(schema, value);
  for (const key of path) {
    if (current === undefined) return undefined;
    value = isObject(value) ? value[key] : undefined;
    const next = child(current, key);
    current = next === undefined ? undefined : unwrap(next, value);
  }
  return current instanceof z.ZodObject ? Object.keys(current.shape) : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      row.push(Math.min(substitution, (previous[j] as number) + 1, (row[j - 1] as number) + 1));
    }
    previous = row;
  }
  return previous[b.length] as number;
}

/**
 * The allowed key `unknown` most likely stands for: a synonym (`children` → `steps`), the one key it
 * is a prefix of or extends (`timeout` → `timeoutMs`), else the nearest key within one edit per
 * three characters (`temprature` → `temperature`). Case is ignored.
 */
export function closestKey(unknown: string, allowed: readonly string[]): string | undefined {
  const sent = unknown.toLowerCase();
  const synonym = SYNONYMS[sent];
  if (synonym !== undefined && allowed.includes(synonym)) return synonym;

  if (sent.length >= 3) {
    const byPrefix = allowed.filter((key) => {
      const k = key.toLowerCase();
      return k !== sent && (k.startsWith(sent) || sent.startsWith(k));
    });
    if (byPrefix.length === 1) return byPrefix[0];
  }

  const budget = Math.min(2, Math.floor(sent.length / 3));
  let best: string | undefined;
  let bestDistance = budget + 1;
  for (const key of allowed) {
    const distance = editDistance(sent, key.toLowerCase());
    if (distance < bestDistance) {
      best = key;
      bestDistance = distance;
    }
  }
  return best;
}
