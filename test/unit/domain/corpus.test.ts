import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CHUNK_CHARS, CHUNK_OVERLAP_CHARS, chunkText } from '../../../src/domain/corpus.js';

/** A deterministic text of `words` words from a small vocabulary, with a blank line every `para` words. */
function prose(words: number, para = 0): string {
  const vocabulary = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'];
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    out.push(`${vocabulary[(i * 7) % vocabulary.length]}${i}`);
    if (para > 0 && (i + 1) % para === 0) out.push('\n\n');
    else out.push(' ');
  }
  return out.join('').trim();
}

describe('chunkText', () => {
  it('keeps a short document as one chunk, trimmed', () => {
    expect(chunkText('  A short note about deploys.  ')).toEqual(['A short note about deploys.']);
    expect(chunkText('x'.repeat(CHUNK_CHARS))).toHaveLength(1);
  });

  it('gives a blank text no chunk', () => {
    expect(chunkText('')).toEqual([]);
    expect(chunkText(' \n\n\t ')).toEqual([]);
  });

  it('cuts long text at whitespace into chunks of at most CHUNK_CHARS, never mid-word', () => {
    const text = prose(1_000);
    const chunks = chunkText(text);
    expect(chunks.length).toBeGreaterThan(5);
    const words = new Set(text.split(/\s+/));
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(CHUNK_CHARS);
      expect(chunk.length).toBeGreaterThanOrEqual(CHUNK_CHARS / 2 - CHUNK_OVERLAP_CHARS);
      // Every word of every chunk is a whole word of the text.
      for (const word of chunk.split(/\s+/)) expect(words.has(word), word).toBe(true);
    }
  });

  it('overlaps consecutive chunks by up to CHUNK_OVERLAP_CHARS, starting at a word', () => {
    const chunks = chunkText(prose(1_000));
    for (let i = 1; i < chunks.length; i++) {
      const previous = chunks[i - 1] as string;
      const current = chunks[i] as string;
      // The longest prefix of this chunk that the previous one ends with.
      let overlap = 0;
      for (let n = Math.min(CHUNK_OVERLAP_CHARS, current.length); n > 0; n--) {
        if (previous.endsWith(current.slice(0, n))) {
          overlap = n;
          break;
        }
      }
      expect(overlap, `chunk ${i}`).toBeGreaterThan(CHUNK_OVERLAP_CHARS / 2);
      expect(overlap).toBeLessThanOrEqual(CHUNK_OVERLAP_CHARS);
    }
  });

  it('prefers a paragraph break to any other whitespace', () => {
    // Paragraphs of 50 words (~500 chars): every chunk but the last ends where a paragraph does.
    const text = prose(600, 50);
    const chunks = chunkText(text);
    const paragraphEnds = new Set(text.split('\n\n').map((p) => p.trim().split(' ').at(-1)));
    for (const chunk of chunks.slice(0, -1)) expect(paragraphEnds.has(chunk.split(/\s+/).at(-1))).toBe(true);
  });

  it('cuts a single enormous word hard, without splitting a surrogate pair', () => {
    const chunks = chunkText('😀'.repeat(2_000));
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(CHUNK_CHARS);
      expect(chunk).toMatch(/^(?:😀)+$/u);
    }
  });

  it('loses no word of any text and always terminates', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 5_000, unit: fc.constantFrom('a', 'b', ' ', '\n', 'é', '😀') }), (text) => {
        const chunks = chunkText(text);
        const joined = chunks.join(' ');
        for (const word of text.split(/\s+/).filter((w) => w.length > 0 && w.length < CHUNK_CHARS / 2)) {
          expect(joined).toContain(word);
        }
        for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(CHUNK_CHARS);
      }),
      { numRuns: 200 },
    );
  });
});
