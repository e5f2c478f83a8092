import { randomBytes } from 'node:crypto';

/**
 * Time-ordered ids (docs/design.md#storage): 12 hex digits of milliseconds, then a per-process counter and
 * random bits, so ids sort by creation and B-tree inserts stay append-mostly.
 * The counter keeps ids created in the same millisecond ordered too.
 */
let lastMs = 0;
let counter = 0;
const pool = { bytes: Buffer.alloc(0), offset: 0 };

function randomHex(bytes: number): string {
  if (pool.offset + bytes > pool.bytes.length) {
    pool.bytes = randomBytes(4096);
    pool.offset = 0;
  }
  const hex = pool.bytes.toString('hex', pool.offset, pool.offset + bytes);
  pool.offset += bytes;
  return hex;
}

function timeOrderedHex(randomBytesCount: number): string {
  const ms = Date.now();
  if (ms > lastMs) {
    lastMs = ms;
    counter = 0;
  } else {
    counter = (counter + 1) & 0xffffff;
  }
  return lastMs.toString(16).padStart(12, '0') + counter.toString(16).padStart(6, '0') + randomHex(randomBytesCount);
}

export type IdPrefix = 'wf' | 'nd' | 'req' | 'toolu' | 'rf' | 'rr' | 'cp' | 'doc' | 'in';

/** `wf_…`, `nd_…`: 12 + 6 + 14 = 32 hex digits. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${timeOrderedHex(7)}`;
}

/** `trace_` + 32 hex (docs/design.md#events-spans-metrics-and-rewards). */
export function newTraceId(): string {
  return `trace_${timeOrderedHex(7)}`;
}

/** `span_` + 24 hex (docs/design.md#events-spans-metrics-and-rewards). */
export function newSpanId(): string {
  return `span_${timeOrderedHex(3)}`;
}
