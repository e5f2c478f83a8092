import { MAX_QUERY_TERMS } from '../domain/corpus.js';

/**
 * A user's search text as an FTS5 MATCH expression that cannot be a syntax error or an operator:
 * the words (runs of letters, digits and combining marks, as unicode61 reads them), lower-cased,
 * de-duplicated, at most MAX_QUERY_TERMS, each a quoted string, OR-ed. Nothing of the user's text
 * but those characters reaches MATCH, so `"`, `*`, `:`, `^`, parentheses, `NEAR(`, `AND`/`OR`/`NOT`
 * and column filters are plain words or gone.
 */
const WORD = /[\p{L}\p{N}\p{M}]+/gu;

export function queryTerms(query: string): string[] {
  const terms = new Set<string>();
  for (const [word] of query.matchAll(WORD)) {
    terms.add(word.toLowerCase());
    if (terms.size >= MAX_QUERY_TERMS) break;
  }
  return [...terms];
}

/** The terms as one MATCH expression: each a quoted string, OR-ed. */
export function anyOf(terms: readonly string[]): string {
  return terms.map((term) => `"${term}"`).join(' OR ');
}

/**
 * The terms BM25 weighs: FTS5 gives a term found in half the indexed rows or more an IDF of 1e-6
 * (its formula is log((N − n + 0.5) / (n + 0.5)), floored), so such a term changes no ranking — but
 * it makes the search score nearly every row. They are left out unless nothing else remains.
 * `rowsWith` answers the index's row count of a term (0 for a word the index stems differently:
 * such a term is kept).
 */
export function weightedTerms(
  terms: readonly string[],
  indexedRows: number,
  rowsWith: (term: string) => number,
): string[] {
  const kept = terms.filter((term) => rowsWith(term) * 2 < indexedRows);
  return kept.length > 0 ? kept : [...terms];
}

/** The token of a corpus in the FTS table's `corpus` column (migrations/0011). */
export function corpusToken(seq: number): string {
  return `c${seq}`;
}

/** Only the chunks of that one corpus, matching any of the terms. */
export function corpusMatch(seq: number, terms: string): string {
  return `corpus : "${corpusToken(seq)}" AND (${terms})`;
}
