import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chunkText } from '../../../src/domain/corpus.js';
import { compress, decompressInto } from '../../../src/store/chunk-codec.js';

/** The chunk code (store/chunk-codec.ts) gives back every input byte for byte, and refuses what it did not write. */

const roundTrip = (bytes: Uint8Array): Buffer => {
  const out = Buffer.alloc(bytes.length);
  decompressInto(compress(bytes), 0, out, bytes.length);
  return out;
};

describe('chunk codec', () => {
  it('round-trips arbitrary bytes, text and chunker output', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 3_000 }), (bytes) => {
        expect(roundTrip(bytes).equals(Buffer.from(bytes))).toBe(true);
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 900 }), fc.integer({ min: 1, max: 6 }), (text, times) => {
        for (const chunk of chunkText(text.repeat(times))) {
          const utf8 = Buffer.from(chunk, 'utf8');
          expect(roundTrip(utf8).toString('utf8')).toBe(chunk);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('handles runs longer than one length byte and overlapping matches', () => {
    for (const input of ['a'.repeat(5_000), `${'xyz'.repeat(700)}${'q'.repeat(300)}`, 'ab', '', 'abcdabcdabcd']) {
      const bytes = Buffer.from(input);
      expect(roundTrip(bytes).toString()).toBe(input);
    }
    const text = Buffer.from('deploys run from the main branch; deploys roll back. '.repeat(15));
    expect(compress(text).length).toBeLessThan(text.length / 4);
  });

  it('throws on truncated or altered input rather than reading past it', () => {
    const bytes = Buffer.from('the on-call engineer acknowledges pages within 15 minutes. '.repeat(10));
    const packed = compress(bytes);
    const out = Buffer.alloc(bytes.length);
    expect(() => decompressInto(packed.subarray(0, packed.length - 3), 0, out, bytes.length)).toThrow(/corrupt/);
    expect(() => decompressInto(packed, 0, Buffer.alloc(bytes.length - 1), bytes.length - 1)).toThrow(/corrupt/);
    expect(() => compress(new Uint8Array(70_000))).toThrow(/over/);
  });
});
