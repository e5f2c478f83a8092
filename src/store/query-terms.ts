import { MAX_QUERY_TERMS } from '../domain/corpus.js';

/**
 * A user's search text as the words both corpus stores search for, so no search syntax of either
 * (FTS5 MATCH, PostgreSQL text search) can come of it: the words (runs of letters, digits and
 * combining marks, as unicode61 reads them), lower-cased, de-duplicated, at most MAX_QUERY_TERMS.
 * Nothing of the user's text but those characters reaches a query, so `"`, `*`, `:`, `^`, `&`,
 * `|`, `!`, parentheses, `NEAR(`, `AND`/`OR`/`NOT` and column filters are plain words or gone. The
 * SQLite store quotes and ORs them (store/sqlite/corpus-search.ts); the PostgreSQL store looks their
 * stems up in its term table (store/postgres/corpus-search.ts). Which terms a search weighs is
 * chosen here, once, for both.
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

/**
 * The terms BM25 weighs: FTS5 gives a term found in half the corpus's rows or more an IDF of 1e-6
 * (its formula is log((N − n + 0.5) / (n + 0.5)), floored), so such a term changes no ranking — but
 * it makes the search score nearly every row. They are left out unless nothing else remains; terms
 * in no row match nothing and are left out too. `rowsWith` answers how many of the corpus's rows
 * hold a term (counted through the index, so stemmed as the index stems it); `indexedRows` is the
 * corpus's row count: both per corpus, so another corpus's data changes nothing here
 * (migrations/sqlite/0015, migrations/postgres/0010).
 */
export function weightedTerms(
  terms: readonly string[],
  indexedRows: number,
  rowsWith: (term: string) => number,
): string[] {
  const present = terms.filter((term) => rowsWith(term) > 0);
  const kept = present.filter((term) => rowsWith(term) * 2 < indexedRows);
  return kept.length > 0 ? kept : present;
}

/**
 * The weighted terms, rarest first, while the rows they match add up to at most `maxRows` (the
 * rarest one always): a bound on the rows a search scores. The terms left out are the commonest of
 * the query, those BM25 weighs least. Returned in query order; empty when no term is in any row.
 */
export function boundedTerms(
  terms: readonly string[],
  indexedRows: number,
  rowsWith: (term: string) => number,
  maxRows: number,
): string[] {
  const rows = new Map(terms.map((term) => [term, rowsWith(term)]));
  const weighted = weightedTerms(terms, indexedRows, (term) => rows.get(term) ?? 0);
  const kept = new Set<string>();
  let total = 0;
  for (const term of [...weighted].sort((a, b) => (rows.get(a) ?? 0) - (rows.get(b) ?? 0))) {
    const n = rows.get(term) ?? 0;
    if (kept.size > 0 && total + n > maxRows) break;
    kept.add(term);
    total += n;
  }
  return weighted.filter((term) => kept.has(term));
}
