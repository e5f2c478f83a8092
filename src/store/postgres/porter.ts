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

type Word = number[];
type Condition = (word: Word, stem: number) => boolean;

const code = (c: string): number => c.charCodeAt(0);
const A = code('a');
const E = code('e');
const I = code('i');
const O = code('o');
const U = code('u');
const Y = code('y');

function isVowel(c: number | undefined, yIsVowel: boolean): boolean {
  return c === A || c === E || c === I || c === O || c === U || (yIsVowel && c === Y);
}

/** Skips [C](VC) once from `from` over the first `end` bytes: the index after the VC, or 0. */
function skipVC(word: Word, from: number, end: number, previousConsonant: boolean): number {
  let consonant = previousConsonant;
  let i = from;
  for (; i < end; i++) {
    consonant = !isVowel(word[i], consonant);
    if (!consonant) break;
  }
  for (i++; i < end; i++) {
    consonant = !isVowel(word[i], consonant);
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
  const last = word[stem - 1];
  if (last === code('w') || last === code('x') || last === Y) return false;
  let mask = 0;
  let consonant = false;
  for (let i = 0; i < stem; i++) {
    consonant = !isVowel(word[i], consonant);
    mask = ((mask << 1) | (consonant ? 1 : 0)) & 0x7;
  }
  return mask === 0b101;
};

/** *v*: the stem holds a vowel (`y` counts after the first byte). */
const hasVowel: Condition = (word, stem) => {
  for (let i = 0; i < stem; i++) if (isVowel(word[i], i > 0)) return true;
  return false;
};

const measureAbove1EndsST: Condition = (word, stem) =>
  (word[stem - 1] === code('s') || word[stem - 1] === code('t')) && measureAbove1(word, stem);

interface Rule {
  suffix: Word;
  replacement: Word;
  condition?: Condition;
}

const bytes = (s: string): Word => [...Buffer.from(s, 'ascii')];
const rule = (suffix: string, replacement: string, condition?: Condition): Rule =>
  condition === undefined
    ? { suffix: bytes(suffix), replacement: bytes(replacement) }
    : { suffix: bytes(suffix), replacement: bytes(replacement), condition };

/** A step's rules, grouped by the suffix's second-last letter (FTS5 looks only there). */
function step(rules: Rule[]): Map<number, Rule[]> {
  const byLetter = new Map<number, Rule[]>();
  for (const r of rules) {
    const letter = r.suffix[r.suffix.length - 2] as number;
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

function endsWith(word: Word, suffix: Word): boolean {
  // Strictly longer: a suffix is never the whole word.
  if (word.length <= suffix.length) return false;
  const offset = word.length - suffix.length;
  for (let i = 0; i < suffix.length; i++) if (word[offset + i] !== suffix[i]) return false;
  return true;
}

/** Applies the first rule of the step whose suffix matches, when its condition holds: that rule. */
function apply(word: Word, rules: Map<number, Rule[]>): Rule | undefined {
  for (const r of rules.get(word[word.length - 2] as number) ?? []) {
    if (!endsWith(word, r.suffix)) continue;
    const stem = word.length - r.suffix.length;
    if (r.condition !== undefined && !r.condition(word, stem)) return undefined;
    word.splice(stem, r.suffix.length, ...r.replacement);
    return r;
  }
  return undefined;
}

function step1A(word: Word): void {
  const n = word.length;
  if (word[n - 1] !== code('s')) return;
  if (word[n - 2] === E) {
    const sses = n > 4 && word[n - 4] === code('s') && word[n - 3] === code('s');
    const ies = n > 3 && word[n - 3] === I;
    word.length = sses || ies ? n - 2 : n - 1;
  } else if (word[n - 2] !== code('s')) {
    word.length = n - 1;
  }
}

export function porterStem(token: string): string {
  const utf8 = Buffer.from(token, 'utf8');
  if (utf8.length > MAX_TOKEN_BYTES || utf8.length < 3) return token;
  const word: Word = [...utf8];

  step1A(word);
  // Only removing `ed` or `ing` goes on to 1b's second part (`eed` → `ee` does not).
  const removed = apply(word, STEP_1B);
  if (removed !== undefined && removed.replacement.length === 0 && apply(word, STEP_1B2) === undefined) {
    const last = word[word.length - 1] as number;
    if (
      !isVowel(last, false) &&
      last !== code('l') &&
      last !== code('s') &&
      last !== code('z') &&
      last === word[word.length - 2]
    ) {
      word.length--;
    } else if (measureIs1(word, word.length) && endsCVC(word, word.length)) {
      word.push(E);
    }
  }
  // 1c
  if (word[word.length - 1] === Y && hasVowel(word, word.length - 1)) word[word.length - 1] = I;
  apply(word, STEP_2);
  apply(word, STEP_3);
  apply(word, STEP_4);
  // 5a
  if (word[word.length - 1] === E) {
    const stem = word.length - 1;
    if (measureAbove1(word, stem) || (measureIs1(word, stem) && !endsCVC(word, stem))) word.length--;
  }
  // 5b
  if (word.length > 1 && word[word.length - 1] === code('l') && word[word.length - 2] === code('l')) {
    if (measureAbove1(word, word.length - 1)) word.length--;
  }
  return Buffer.from(word).toString('utf8');
}
