/**
 * The Porter stemmer (M. F. Porter, 1980) as SQLite's FTS5 `porter` tokenizer applies it, so the
 * PostgreSQL store stems exactly as the SQLite store's index does (fts5-tokens.ts). It works on the
 * token's UTF-8 bytes as FTS5 does: a token shorter than 3 or longer than 64 bytes is kept as it
 * is; any byte that is not an ASCII vowel counts as a consonant; `y` is a vowel after a consonant.
 * Within each step the rules are tried in order and only the first whose suffix matches is
 * considered (applied when its condition holds), as in FTS5, which also adds the published
 * algorithm's later rules (`logi` → `log`, `bli` → `ble`).
 */

const MAX_TOKEN_BYTES = 64;

/**
 * A word is worked on as a string of its UTF-8 bytes, one character each (latin1): an ASCII token
 * is that string already, and suffixes are ASCII, so the rules see exactly FTS5's bytes.
 */
type Condition = (word: string, stem: number) => boolean;

const A = 0x61;
const E = 0x65;
const I = 0x69;
const L = 0x6c;
const O = 0x6f;
const S = 0x73;
const T = 0x74;
const U = 0x75;
const W = 0x77;
const X = 0x78;
const Y = 0x79;
const Z = 0x7a;

function isVowel(c: number, yIsVowel: boolean): boolean {
  return c === A || c === E || c === I || c === O || c === U || (yIsVowel && c === Y);
}

/** Skips [C](VC) once from `from` over the first `end` bytes: the index after the VC, or 0. */
function skipVC(word: string, from: number, end: number, previousConsonant: boolean): number {
  let consonant = previousConsonant;
  let i = from;
  for (; i < end; i++) {
    consonant = !isVowel(word.charCodeAt(i), consonant);
    if (!consonant) break;
  }
  for (i++; i < end; i++) {
    consonant = !isVowel(word.charCodeAt(i), consonant);
    if (consonant) return i + 1;
  }
  return 0;
}

/** m > 0 for the stem word[0..stem). */
const measureAbove0: Condition = (word, stem) => skipVC(word, 0, stem, false) !== 0;

const measureAbove1: Condition = (word, stem) => {
  const n = skipVC(word, 0, stem, false);
  return n !== 0 && skipVC(word, n, stem, true) !== 0;
};

const measureIs1: Condition = (word, stem) => {
  const n = skipVC(word, 0, stem, false);
  return n !== 0 && skipVC(word, n, stem, true) === 0;
};

/** *o: the stem ends consonant-vowel-consonant, the last not w, x or y. */
const endsCVC: Condition = (word, stem) => {
  const last = word.charCodeAt(stem - 1);
  if (last === W || last === X || last === Y) return false;
  let mask = 0;
  let consonant = false;
  for (let i = 0; i < stem; i++) {
    consonant = !isVowel(word.charCodeAt(i), consonant);
    mask = ((mask << 1) | (consonant ? 1 : 0)) & 0x7;
  }
  return mask === 0b101;
};

/** *v*: the stem holds a vowel (`y` counts after the first byte). */
const hasVowel: Condition = (word, stem) => {
  for (let i = 0; i < stem; i++) if (isVowel(word.charCodeAt(i), i > 0)) return true;
  return false;
};

const measureAbove1EndsST: Condition = (word, stem) => {
  const last = word.charCodeAt(stem - 1);
  return (last === S || last === T) && measureAbove1(word, stem);
};

interface Rule {
  suffix: string;
  replacement: string;
  condition?: Condition;
}

const rule = (suffix: string, replacement: string, condition?: Condition): Rule =>
  condition === undefined ? { suffix, replacement } : { suffix, replacement, condition };

/** A step's rules, grouped by the suffix's second-last letter (FTS5 looks only there). */
function step(rules: Rule[]): Map<number, Rule[]> {
  const byLetter = new Map<number, Rule[]>();
  for (const r of rules) {
    const letter = r.suffix.charCodeAt(r.suffix.length - 2);
    byLetter.set(letter, [...(byLetter.get(letter) ?? []), r]);
  }
  return byLetter;
}

const STEP_1B = step([rule('eed', 'ee', measureAbove0), rule('ed', '', hasVowel), rule('ing', '', hasVowel)]);
const STEP_1B2 = step([rule('at', 'ate'), rule('bl', 'ble'), rule('iz', 'ize')]);
const STEP_2 = step([
  rule('ational', 'ate', measureAbove0),
  rule('tional', 'tion', measureAbove0),
  rule('enci', 'ence', measureAbove0),
  rule('anci', 'ance', measureAbove0),
  rule('izer', 'ize', measureAbove0),
  rule('logi', 'log', measureAbove0),
  rule('bli', 'ble', measureAbove0),
  rule('alli', 'al', measureAbove0),
  rule('entli', 'ent', measureAbove0),
  rule('eli', 'e', measureAbove0),
  rule('ousli', 'ous', measureAbove0),
  rule('ization', 'ize', measureAbove0),
  rule('ation', 'ate', measureAbove0),
  rule('ator', 'ate', measureAbove0),
  rule('alism', 'al', measureAbove0),
  rule('iveness', 'ive', measureAbove0),
  rule('fulness', 'ful', measureAbove0),
  rule('ousness', 'ous', measureAbove0),
  rule('aliti', 'al', measureAbove0),
  rule('iviti', 'ive', measureAbove0),
  rule('biliti', 'ble', measureAbove0),
]);
const STEP_3 = step([
  rule('ical', 'ic', measureAbove0),
  rule('ness', '', measureAbove0),
  rule('icate', 'ic', measureAbove0),
  rule('iciti', 'ic', measureAbove0),
  rule('ful', '', measureAbove0),
  rule('ative', '', measureAbove0),
  rule('alize', 'al', measureAbove0),
]);
const STEP_4 = step([
  rule('al', '', measureAbove1),
  rule('ance', '', measureAbove1),
  rule('ence', '', measureAbove1),
  rule('er', '', measureAbove1),
  rule('ic', '', measureAbove1),
  rule('able', '', measureAbove1),
  rule('ible', '', measureAbove1),
  rule('ant', '', measureAbove1),
  rule('ement', '', measureAbove1),
  rule('ment', '', measureAbove1),
  rule('ent', '', measureAbove1),
  rule('ion', '', measureAbove1EndsST),
  rule('ou', '', measureAbove1),
  rule('ism', '', measureAbove1),
  rule('ate', '', measureAbove1),
  rule('iti', '', measureAbove1),
  rule('ous', '', measureAbove1),
  rule('ive', '', measureAbove1),
  rule('ize', '', measureAbove1),
]);

/**
 * Applies the first rule of the step whose suffix matches (strictly shorter than the word), when its
 * condition holds: the word after it, and the rule (undefined when none applied).
 */
function apply(word: string, rules: Map<number, Rule[]>): { word: string; rule: Rule | undefined } {
  for (const r of rules.get(word.charCodeAt(word.length - 2)) ?? []) {
    if (word.length <= r.suffix.length || !word.endsWith(r.suffix)) continue;
    const stem = word.length - r.suffix.length;
    if (r.condition !== undefined && !r.condition(word, stem)) return { word, rule: undefined };
    return { word: word.slice(0, stem) + r.replacement, rule: r };
  }
  return { word, rule: undefined };
}

function step1A(word: string): string {
  const n = word.length;
  if (word.charCodeAt(n - 1) !== S) return word;
  if (word.charCodeAt(n - 2) === E) {
    const sses = n > 4 && word.charCodeAt(n - 4) === S && word.charCodeAt(n - 3) === S;
    const ies = n > 3 && word.charCodeAt(n - 3) === I;
    return word.slice(0, sses || ies ? n - 2 : n - 1);
  }
  return word.charCodeAt(n - 2) !== S ? word.slice(0, n - 1) : word;
}

function isAscii(token: string): boolean {
  for (let i = 0; i < token.length; i++) if (token.charCodeAt(i) > 0x7f) return false;
  return true;
}

export function porterStem(token: string): string {
  const ascii = isAscii(token);
  let word = ascii ? token : Buffer.from(token, 'utf8').toString('latin1');
  if (word.length > MAX_TOKEN_BYTES || word.length < 3) return token;

  word = step1A(word);
  const b1 = apply(word, STEP_1B);
  word = b1.word;
  // Only removing `ed` or `ing` goes on to 1b's second part (`eed` → `ee` does not).
  if (b1.rule !== undefined && b1.rule.replacement === '') {
    const b2 = apply(word, STEP_1B2);
    word = b2.word;
    if (b2.rule === undefined) {
      const last = word.charCodeAt(word.length - 1);
      if (
        !isVowel(last, false) &&
        last !== L &&
        last !== S &&
        last !== Z &&
        last === word.charCodeAt(word.length - 2)
      ) {
        word = word.slice(0, -1);
      } else if (measureIs1(word, word.length) && endsCVC(word, word.length)) {
        word += 'e';
      }
    }
  }
  // 1c
  if (word.charCodeAt(word.length - 1) === Y && hasVowel(word, word.length - 1)) word = `${word.slice(0, -1)}i`;
  word = apply(word, STEP_2).word;
  word = apply(word, STEP_3).word;
  word = apply(word, STEP_4).word;
  // 5a
  if (word.charCodeAt(word.length - 1) === E) {
    const stem = word.length - 1;
    if (measureAbove1(word, stem) || (measureIs1(word, stem) && !endsCVC(word, stem))) word = word.slice(0, stem);
  }
  // 5b
  if (word.length > 1 && word.charCodeAt(word.length - 1) === L && word.charCodeAt(word.length - 2) === L) {
    if (measureAbove1(word, word.length - 1)) word = word.slice(0, -1);
  }
  return ascii ? word : Buffer.from(word, 'latin1').toString('utf8');
}
