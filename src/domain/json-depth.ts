/**
 * Nesting depth of JSON-like values, measured without recursion: a value nested 10 000 levels deep
 * must be refused with a 400, not overflow the stack of whatever walks it next (JSON.stringify
 * itself gives up near 5 000 levels). docs/design.md#security: depth is checked before recursive parsing.
 */

/** Path segments shown before a long path is cut with `…`. */
const SHOWN_SEGMENTS = 10;

interface Frame {
  value: object;
  depth: number;
  key: string | undefined;
  parent: Frame | undefined;
}

/**
 * The path (after `base`) of the first value nested deeper than `maxDepth` containers, or undefined.
 * Depth counts containers: `{}` is 1, `{"a": []}` is 2. Each container is visited once; paths are
 * parent links, built into an array only for the answer (this runs on every submitted body).
 */
export function tooDeepPath(value: unknown, maxDepth: number, base: readonly string[] = []): string[] | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const stack: Frame[] = [{ value, depth: 1, key: undefined, parent: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    if (frame.depth > maxDepth) return [...base, ...pathOf(frame)];
    const container = frame.value as Record<string, unknown>;
    for (const key in container) {
      if (!Object.hasOwn(container, key)) continue;
      const child = container[key];
      if (child !== null && typeof child === 'object') {
        stack.push({ value: child, depth: frame.depth + 1, key, parent: frame });
      }
    }
  }
  return undefined;
}

function pathOf(frame: Frame): string[] {
  const path: string[] = [];
  for (let f: Frame | undefined = frame; f?.key !== undefined; f = f.parent) path.push(f.key);
  return path.reverse();
}

/** `a.b.c`, cut after the first segments so a 10 000-level path stays one readable line. */
export function formatPath(segments: readonly string[]): string {
  if (segments.length <= SHOWN_SEGMENTS) return segments.join('.');
  return `${segments.slice(0, SHOWN_SEGMENTS).join('.')}…`;
}
