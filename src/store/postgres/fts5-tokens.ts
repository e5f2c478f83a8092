import { porterStem } from './porter.js';
import { KEPT, SEPARATORS } from './unicode61-tables.js';

/**
 * The words of a text as the SQLite store's index reads them (`tokenize = 'porter unicode61'`,
 * store/sqlite/corpus-index.ts), so that the PostgreSQL store counts the same terms in the same
 * chunks and its BM25 (corpus-search.ts) gives the same scores:
 *
 * - a token is a run of letters (L*), digits (N*) and private-use characters (Co); a combining
 *   diacritic (U+0300–U+0331, the set unicode61 calls diacritics) continues a token but starts none;
 * - each character is lower-cased and, for Latin letters, stripped of its diacritics
 *   (`remove_diacritics=1`); the diacritics themselves are dropped;
 * - each token is then stemmed by the Porter algorithm as FTS5 applies it (porter.ts).
 *
 * unicode61 knows Unicode 6.1; where V8's Unicode answers otherwise, unicode61-tables.ts says what
 * unicode61 does (read off FTS5 for every character up to U+2FFFF and the tags block; beyond, V8's
 * categories decide). The unit test test/unit/store/fts5-tokens.test.ts holds this against FTS5
 * itself, character by character and on mixed text.
 */

const ASCII_TOKEN = /[0-9A-Za-z]/;
const UNICODE_TOKEN = /[\p{L}\p{N}\p{Co}]/u;
const DIACRITIC_MASK_LOW = 0x08029fdf;
const DIACRITIC_MASK_HIGH = 0x000361f8;
const COMBINING = /\p{M}/gu;
const COMBINING_ONE = /^\p{M}$/u;

/** The characters the tables cover; beyond them V8's categories decide. */
const TABLED = (code: number): boolean => code < 0x30000 || (code >= 0xe0000 && code < 0xe01f0);

function inRanges(ranges: ReadonlyArray<readonly [number, number]>, code: number): boolean {
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [first, last] = ranges[mid] as readonly [number, number];
    if (code < first) hi = mid - 1;
    else if (code > last) lo = mid + 1;
    else return true;
  }
  return false;
}

const tokenChars = new Map<number, boolean>();

/** Is this non-ASCII character a word character to unicode61? */
function isTokenChar(code: number): boolean {
  let known = tokenChars.get(code);
  if (known === undefined) {
    known = TABLED(code) ? !inRanges(SEPARATORS, code) : UNICODE_TOKEN.test(String.fromCodePoint(code));
    tokenChars.set(code, known);
  }
  return known;
}

function isDiacritic(code: number): boolean {
  if (code < 0x300 || code > 0x331) return false;
  return code < 0x320
    ? (DIACRITIC_MASK_LOW & (1 << (code - 0x300))) !== 0
    : (DIACRITIC_MASK_HIGH & (1 << (code - 0x320))) !== 0;
}

const folded = new Map<number, string>();

/** One non-ASCII token character as unicode61 writes it into the token ('' when it drops it). */
function fold(code: number): string {
  const cached = folded.get(code);
  if (cached !== undefined) return cached;
  let out: string;
  if (isDiacritic(code)) out = '';
  else if (inRanges(KEPT, code)) out = String.fromCodePoint(code);
  else {
    const char = String.fromCodePoint(code);
    // Case folding (µ → μ, ſ → s, ς → σ), one character to one.
    const lower = char.toUpperCase().toLowerCase();
    out = [...lower].length === 1 ? lower : char.toLowerCase();
    // A Latin letter with one diacritic becomes its ASCII letter; one with two keeps both.
    const parts = [...out.normalize('NFD')];
    if (parts.length === 2 && /^[a-z]$/.test(parts[0] as string) && COMBINING_ONE.test(parts[1] as string)) {
      out = parts[0] as string;
    } else if ([...out].length > 1) {
      out = out.normalize('NFD').replace(COMBINING, '');
    }
  }
  folded.set(code, out);
  return out;
}

/** The tokens of `text`, folded but not stemmed, in order. */
export function unicode61Tokens(text: string): string[] {
  const tokens: string[] = [];
  let current = '';
  let open = false;
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    if (code < 0x80) {
      if (ASCII_TOKEN.test(char)) {
        current += char.toLowerCase();
        open = true;
        continue;
      }
    } else if (isDiacritic(code) ? open : isTokenChar(code)) {
      current += fold(code);
      open = true;
      continue;
    }
    if (open) tokens.push(current);
    current = '';
    open = false;
  }
  if (open) tokens.push(current);
  return tokens;
}

/** The terms of `text` as the index holds them: folded and stemmed, in order, repeats kept. */
export function fts5Terms(text: string): string[] {
  return unicode61Tokens(text).map(porterStem);
}

/** How often each term occurs in `text`, and how many tokens it has (BM25's document length). */
export function termCounts(text: string): { counts: Map<string, number>; tokens: number } {
  const counts = new Map<string, number>();
  const terms = fts5Terms(text);
  for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
  return { counts, tokens: terms.length };
}
