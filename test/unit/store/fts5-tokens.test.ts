import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { fts5Terms } from '../../../src/store/postgres/fts5-tokens.js';
import { porterStem } from '../../../src/store/postgres/porter.js';
import { BIDI, HOSTILE_TEXT, MARKUP_PAYLOADS, unbrokenWord, ZERO_WIDTH } from '../../support/hostile-text.js';

/**
 * The PostgreSQL store's reading of text (store/postgres/fts5-tokens.ts, porter.ts,
 * unicode61-tables.ts) against SQLite's FTS5 `porter unicode61` itself: the terms it indexes, in
 * order, for every character on its own, for words of every Porter rule, and for mixed and hostile
 * text. Equal terms are what make the two stores' BM25 scores equal.
 */
const db = new Database(':memory:');
afterAll(() => db.close());
db.exec(`CREATE VIRTUAL TABLE f USING fts5(text, tokenize = 'porter unicode61');
         CREATE VIRTUAL TABLE v USING fts5vocab(f, 'instance');`);

/** FTS5's terms of each text, in order. */
function fts5(texts: readonly string[]): string[][] {
  db.exec('DELETE FROM f');
  const insert = db.prepare('INSERT INTO f (rowid, text) VALUES (?, ?)');
  db.transaction(() => {
    for (const [i, text] of texts.entries()) insert.run(i + 1, text);
  })();
  const terms: string[][] = texts.map(() => []);
  const rows = db.prepare('SELECT doc, term FROM v ORDER BY doc, offset').all() as Array<{ doc: number; term: string }>;
  for (const row of rows) terms[row.doc - 1]?.push(row.term);
  return terms;
}

function expectSame(texts: readonly string[]): void {
  const expected = fts5(texts);
  const mismatches = texts
    .map((text, i) => ({ text, sqlite: expected[i], ours: fts5Terms(text) }))
    .filter((m) => JSON.stringify(m.sqlite) !== JSON.stringify(m.ours));
  expect(mismatches.slice(0, 5)).toEqual([]);
}

describe('fts5Terms', () => {
  it('reads every character as unicode61 does, on its own and inside a word', () => {
    const texts: string[] = [];
    for (let code = 0x80; code < 0x30000; code += code < 0x3000 ? 1 : 7) {
      if (code >= 0xd800 && code < 0xe000) continue;
      texts.push(`ab${String.fromCodePoint(code)}cd ${String.fromCodePoint(code)}`);
    }
    expectSame(texts);
  });

  it('stems every Porter rule as FTS5 does', () => {
    const stems = [
      'rat',
      'hop',
      'fil',
      'conflat',
      'relat',
      'gener',
      'digit',
      'sens',
      'controll',
      'agree',
      'sky',
      'pony',
    ];
    const suffixes =
      ' s es ies sses ed ing eed ational tional enci anci izer logi bli alli entli eli ousli ization ation ator alism iveness fulness ousness aliti iviti biliti icate ative alize iciti ical ful ness al ance ence er ic able ible ant ement ment ent ion sion tion ou ism ate iti ous ive ize e ll y ly ingly edly'.split(
        ' ',
      );
    const words = stems.flatMap((stem) => suffixes.flatMap((a) => suffixes.slice(0, 12).map((b) => stem + a + b)));
    expectSame(words);
    expect(porterStem('caresses')).toBe('caress');
    expect(porterStem('relational')).toBe('relat');
    const long = `${'x'.repeat(65)}ing`;
    expect(porterStem(long)).toBe(long);
  });

  it('reads mixed, hostile and random text as FTS5 does', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 48271) % 2147483647;
      return seed;
    };
    const alphabet = [
      ...'aeiouyAEIOUYbcdlmnrstz -_.\'"*:()&|!<>\n\t0123456789éÉñßøæ‐–İıσςΣ𝒜😀🚀\u0301\u0308\u0000\u200b',
    ];
    const randomTexts = Array.from({ length: 400 }, () =>
      Array.from({ length: 1 + (random() % 60) }, () => alphabet[random() % alphabet.length]).join(''),
    );
    expectSame([
      ...MARKUP_PAYLOADS,
      HOSTILE_TEXT,
      BIDI,
      ZERO_WIDTH,
      unbrokenWord(5_000),
      ...randomTexts,
      'Deploys run from the main branch; roll back a deploy with the previous release tag.',
      'Café crème, naïve façade; Ærøskøbing and São Paulo.',
      'ΟΔΟΣ οδός — ἀρχή; Москва; 東京は日本の首都です; हिन्दी भाषा; ภาษาไทย',
    ]);
  });
});
