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

export function compress(src: Uint8Array): Buffer {
  const n = src.length;
  if (n > MAX_INPUT_BYTES) throw new Error(`chunk-codec: ${n} bytes is over ${MAX_INPUT_BYTES}`);
  // Incompressible input grows by one length byte per 255 literals, plus the token.
  const out = Buffer.allocUnsafe(n + Math.ceil(n / 255) + 16);
  const last = new Int32Array(1 << HASH_BITS).fill(-1);
  let o = 0;
  const lengthBytes = (length: number): void => {
    let rest = length;
    for (; rest >= 255; rest -= 255) out[o++] = 255;
    out[o++] = rest;
  };
  const literals = (from: number, to: number, matchNibble: number): void => {
    const count = to - from;
    out[o++] = (Math.min(count, 15) << 4) | matchNibble;
    if (count >= 15) lengthBytes(count - 15);
    out.set(src.subarray(from, to), o);
    o += count;
  };
  let anchor = 0;
  let i = 0;
  while (i + MIN_MATCH <= n) {
    const word =
      (src[i] as number) |
      ((src[i + 1] as number) << 8) |
      ((src[i + 2] as number) << 16) |
      ((src[i + 3] as number) << 24);
    const hash = Math.imul(word, 2654435761) >>> (32 - HASH_BITS);
    const ref = last[hash] as number;
    last[hash] = i;
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
    literals(anchor, i, Math.min(extra, 15));
    const offset = i - ref;
    out[o++] = offset & 0xff;
    out[o++] = offset >>> 8;
    if (extra >= 15) lengthBytes(extra - 15);
    i += length;
    anchor = i;
  }
  literals(anchor, n, 0);
  return out.subarray(0, o);
}

function corrupt(): never {
  throw new Error('chunk-codec: corrupt input');
}

/** Decodes `src` into `out` from `at`, exactly `size` bytes; returns the end. Throws on corrupt input. */
export function decompressInto(src: Uint8Array, out: Uint8Array, at: number, size: number): number {
  const end = at + size;
  let i = 0;
  let o = at;
  for (;;) {
    if (i >= src.length) corrupt();
    const token = src[i++] as number;
    let count = token >>> 4;
    if (count === 15) {
      for (let b = 255; b === 255; count += b) b = i < src.length ? (src[i++] as number) : corrupt();
    }
    if (i + count > src.length || o + count > end) corrupt();
    if (count < 16) for (let k = 0; k < count; k++) out[o++] = src[i++] as number;
    else {
      out.set(src.subarray(i, i + count), o);
      i += count;
      o += count;
    }
    if (i === src.length) break;
    if (i + 2 > src.length) corrupt();
    const offset = (src[i] as number) | ((src[i + 1] as number) << 8);
    i += 2;
    let length = token & 15;
    if (length === 15) {
      for (let b = 255; b === 255; length += b) b = i < src.length ? (src[i++] as number) : corrupt();
    }
    length += MIN_MATCH;
    if (offset === 0 || o - offset < at || o + length > end) corrupt();
    if (offset >= length) {
      out.copyWithin(o, o - offset, o - offset + length);
      o += length;
    } else for (let from = o - offset, stop = o + length; o < stop; ) out[o++] = out[from++] as number;
  }
  if (o !== end) corrupt();
  return o;
}
