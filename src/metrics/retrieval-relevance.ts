/**
 * `memory_retrieval_relevant` (docs/design.md#agent-tools): true when at least one retrieved chunk shares at least
 * three distinct content words with the final answer, false when chunks were retrieved and none
 * does, null when nothing was retrieved. Content words: lower-cased letter/digit runs of two or
 * more characters that are not stop words.
 */

export const MIN_SHARED_WORDS = 3;

// A short English list: the rule asks whether the answer used the chunks' substance, and function
// words would make every chunk look used.
const STOP_WORDS = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before being below ' +
    'between both but by can could did do does doing down during each few for from further had has have having ' +
    'he her here hers herself him himself his how i if in into is it its itself just me more most my myself no ' +
    'nor not now of off on once only or other our ours ourselves out over own same she should so some such than ' +
    'that the their theirs them themselves then there these they this those through to too under until up very ' +
    'was we were what when where which while who whom why will with would you your yours yourself yourselves ' +
    'may might must shall us via per one two new use used using'
  ).split(' '),
);

export function contentWords(text: string): Set<string> {
  const words = new Set<string>();
  for (const match of text.toLowerCase().matchAll(/[\p{L}\p{N}]{2,}/gu)) {
    if (!STOP_WORDS.has(match[0])) words.add(match[0]);
  }
  return words;
}

export function retrievalRelevant(chunks: readonly string[], answer: string): boolean | null {
  if (chunks.length === 0) return null;
  const answerWords = contentWords(answer);
  return chunks.some((chunk) => {
    let shared = 0;
    for (const word of contentWords(chunk)) {
      if (answerWords.has(word) && ++shared >= MIN_SHARED_WORDS) return true;
    }
    return false;
  });
}
