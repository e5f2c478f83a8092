/**
 * Bytes of a JSON value's text, counted without building the text and given up once past a limit:
 * a 340 KB schema is known to be over a 32 KiB budget after walking 32 KiB of it, where
 * `JSON.stringify` would first build all of it on the event loop. Iterative, so a deep value cannot
 * overflow the stack (bodies are depth-checked first anyway; see json-depth.ts).
 */

/**
 * The UTF-8 byte length of `JSON.stringify(value)` when it is at most `limit`; undefined when it is
 * larger. Values `JSON.stringify` leaves out of objects (undefined, functions) are left out here too.
 */
export function jsonBytesWithin(value: unknown, limit: number): number | undefined {
  let bytes = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    bytes += scalarBytes(item) ?? containerBytes(item, stack);
    if (bytes > limit) return undefined;
  }
  return bytes;
}

function scalarBytes(item: unknown): number | undefined {
  if (item === null || item === undefined) return 4; // `null` (array slots; objects skip undefined)
  switch (typeof item) {
    case 'string':
      return Buffer.byteLength(JSON.stringify(item));
    case 'number':
      return Number.isFinite(item) ? String(item).length : 4;
    case 'boolean':
      return item ? 4 : 5;
    case 'object':
      return undefined;
    default:
      return 4;
  }
}

/** The brackets, commas and keys of one array or object; its values are pushed to be counted. */
function containerBytes(item: unknown, stack: unknown[]): number {
  if (Array.isArray(item)) {
    for (const element of item) stack.push(element);
    return 2 + Math.max(0, item.length - 1);
  }
  let bytes = 2;
  let members = 0;
  for (const [key, member] of Object.entries(item as object)) {
    if (member === undefined || typeof member === 'function') continue;
    bytes += Buffer.byteLength(JSON.stringify(key)) + 1;
    members++;
    stack.push(member);
  }
  return bytes + Math.max(0, members - 1);
}
