import { MAX_QUERY_TERMS } from '../domain/corpus.js';

/**
 * A user's search text as an FTS5 MATCH expression that cannot be a syntax error or an operator:
 * the words (runs of letters, digits and combining marks, as unicode61 reads them), lower-cased,
 * de-duplicated, at most MAX_QUERY_TERMS, each a quoted string, OR-ed. Nothing of the user's text
 * but those characters reaches MATCH, so `"`, `*`, `:`, `^`, parentheses, `NEAR(`, `AND`/`OR`/`NOT`
 * and column filters are plain words or gone. Undefined when the text has no word.
 */
const WORD = /[\p{L}\p{N}\p{M}]+/gu;

export function matchTerms(query: string): string | undefined {
  const terms = new Set<string>();
  for (const [word] of query.matchAll(WORD)) {
    terms.add(word.toLowerCase());
    if (terms.size >= MAX_QUERY_TERMS) break;
  }
  if (terms.size === 0) return undefined;
  return [...terms].map((term) => `"${term}"`).join(' OR ');
}

/** The token of a corpus in the FTS table's `corpus` column (migrations/0011). */
export function corpusToken(seq: number): string {
  return `c${seq}`;
}

/** Only the chunks of that one corpus, matching any of the terms. */
export function corpusMatch(seq: number, terms: string): string {
  return `corpus : "${corpusToken(seq)}" AND (${terms})`;
}
