/**
 * A byte-oriented LZ77 code for one chunk's UTF-8 (store/chunk-text.ts), in the shape of the LZ4
 * block format: no entropy coding, so decoding is copies only, a few microseconds per chunk where
 * a zlib call costs ~100 µs or more in Node (most of it the call, not the inflating). A sequence is
 * a token byte (high nibble: literal count, low nibble: match length − MIN_MATCH; 15 in either says
 * "more bytes follow": 255 each and one below 255), the literals, then a 2-byte little-endian
 * offset back into the output and the extra match-length bytes. The last sequence has literals
 * only: the input ends after them.
 */

const MIN_MATCH = 4;
const HASH_BITS = 12;
/** Offsets are 2 bytes; a chunk's UTF-8 is at most ~2 400 bytes (CHUNK_CHARS 800). */
export const MAX_INPUT_BYTES = 0xffff;

// Scratch space reused by every call (one thread runs one call at a time): no allocation and no
// clearing per chunk. A hash slot holds `stamp + position`; a slot below this call's stamp is
// from an earlier call and reads as empty.
const table = new Float64Array(1 << HASH_BITS);
let stamp = 0;
const scratch = Buffer.allocUnsafe(MAX_INPUT_BYTES + Math.ceil(MAX_INPUT_BYTES / 255) + 16);

/** Writes a length's continuation bytes (255 each, then one below 255) at `o`; returns the end. */
function lengthBytes(out: Uint8Array, o: number, length: number): number {
  let at = o;
  let rest = length;
  for (; rest >= 255; rest -= 255) out[at++] = 255;
  out[at++] = rest;
  return at;
}

/** Writes a token and the literals `src[from, to)` at `o`; returns the end. */
function literals(src: Uint8Array, from: number, to: number, matchNibble: number, out: Uint8Array, o: number): number {
  const count = to - from;
  out[o] = (Math.min(count, 15) << 4) | matchNibble;
  let at = count >= 15 ? lengthBytes(out, o + 1, count - 15) : o + 1;
  for (let k = from; k < to; k++) out[at++] = src[k] as number;
  return at;
}

/** `prefix` bytes left free at the start of the result (the caller's header), then the code. */
export function compress(src: Uint8Array, prefix = 0): Buffer {
  const n = src.length;
  if (n > MAX_INPUT_BYTES) throw new Error(`chunk-codec: ${n} bytes is over ${MAX_INPUT_BYTES}`);
  // Positions of this call are stamp + i, always above every earlier call's.
  const base = stamp;
  stamp += n + 1;
  if (stamp > 2 ** 52) {
    table.fill(0);
    stamp = 0;
    return compress(src, prefix);
  }
  const out = scratch;
  let o = 0;
  let anchor = 0;
  let i = 0;
  while (i + MIN_MATCH <= n) {
    const word =
      (src[i] as number) |
      ((src[i + 1] as number) << 8) |
      ((src[i + 2] as number) << 16) |
      ((src[i + 3] as number) << 24);
    const hash = Math.imul(word, 2654435761) >>> (32 - HASH_BITS);
    const slot = table[hash] as number;
    table[hash] = base + 1 + i;
    const ref = slot > base ? slot - base - 1 : -1;
    if (
      ref < 0 ||
      src[ref] !== src[i] ||
      src[ref + 1] !== src[i + 1] ||
      src[ref + 2] !== src[i + 2] ||
      src[ref + 3] !== src[i + 3]
    ) {
      i++;
      continue;
    }
    let length = MIN_MATCH;
    while (i + length < n && src[ref + length] === src[i + length]) length++;
    const extra = length - MIN_MATCH;
    o = literals(src, anchor, i, Math.min(extra, 15), out, o);
    const offset = i - ref;
    out[o++] = offset & 0xff;
    out[o++] = offset >>> 8;
    if (extra >= 15) o = lengthBytes(out, o, extra - 15);
    i += length;
    anchor = i;
  }
  o = literals(src, anchor, n, 0, out, o);
  const result = Buffer.allocUnsafe(prefix + o);
  out.copy(result, prefix, 0, o);
  return result;
}

function corrupt(): never {
  throw new Error('chunk-codec: corrupt input');
}

/** Decodes `src` from `from` into `out` from 0, exactly `size` bytes. Throws on corrupt input. */
export function decompressInto(src: Uint8Array, from: number, out: Uint8Array, size: number): void {
  const inEnd = src.length;
  let i = from;
  let o = 0;
  for (;;) {
    if (i >= inEnd) corrupt();
    const token = src[i++] as number;
    let count = token >>> 4;
    if (count === 15) {
      let b = 255;
      while (b === 255) {
        if (i >= inEnd) corrupt();
        b = src[i++] as number;
        count += b;
      }
    }
    if (i + count > inEnd || o + count > size) corrupt();
    for (const stop = i + count; i < stop; ) out[o++] = src[i++] as number;
    if (i === inEnd) break;
    if (i + 2 > inEnd) corrupt();
    const offset = (src[i] as number) | ((src[i + 1] as number) << 8);
    i += 2;
    let length = token & 15;
    if (length === 15) {
      let b = 255;
      while (b === 255) {
        if (i >= inEnd) corrupt();
        b = src[i++] as number;
        length += b;
      }
    }
    length += MIN_MATCH;
    if (offset === 0 || offset > o || o + length > size) corrupt();
    for (let k = o - offset, stop = o + length; o < stop; ) out[o++] = out[k++] as number;
  }
  if (o !== size) corrupt();
}
