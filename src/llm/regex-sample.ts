/** Sample strings for `pattern` keywords (used by schema-instance.ts). */

const CLASS_SAMPLES: Record<string, string> = { d: '0', w: 'a', s: ' ', D: 'a', W: '-', S: 'a' };

/**
 * Walks the common regex syntax (literals, classes, escapes, groups with `|`, quantifiers) and
 * emits the shortest string each piece accepts (one repetition for `+`, the minimum of `{n,m}`).
 * Gives up (undefined) rather than build more than `maxChars` characters.
 */
export function sampleRegex(pattern: string, maxChars = Number.POSITIVE_INFINITY): string | undefined {
  let position = 0;
  const tooLong = new Error('sample too long');
  const parseSequence = (): string => {
    let out = '';
    while (position < pattern.length) {
      const char = pattern[position] as string;
      if (char === ')' || char === '|') return out;
      let atom: string;
      if (char === '^' || char === '$') {
        position++;
        continue;
      }
      if (char === '(') {
        position++;
        if (pattern.startsWith('?:', position)) position += 2;
        const first = parseSequence();
        while (pattern[position] === '|') {
          position++;
          parseSequence();
        }
        position++; // ')'
        atom = first;
      } else if (char === '[') {
        const end = pattern.indexOf(']', position + 2);
        const body = pattern.slice(position + 1, end < 0 ? pattern.length : end);
        position = end < 0 ? pattern.length : end + 1;
        atom = body.startsWith('^')
          ? 'a'
          : body.startsWith('\\')
            ? (CLASS_SAMPLES[body[1] ?? ''] ?? body[1] ?? 'a')
            : (body[0] ?? 'a');
      } else if (char === '\\') {
        const escaped = pattern[position + 1] ?? '';
        position += 2;
        atom = CLASS_SAMPLES[escaped] ?? escaped;
      } else if (char === '.') {
        position++;
        atom = 'a';
      } else {
        position++;
        atom = char;
      }
      const repetitions = readRepetitions();
      if (out.length + atom.length * repetitions > maxChars) throw tooLong;
      out += atom.repeat(repetitions);
    }
    return out;
  };
  const readRepetitions = (): number => {
    const char = pattern[position];
    let count = 1;
    if (char === '*' || char === '?') {
      position++;
      count = 0;
    } else if (char === '+') {
      position++;
    } else if (char === '{') {
      const match = /^\{(\d+)(,\d*)?\}/.exec(pattern.slice(position));
      if (match) {
        position += match[0].length;
        count = Number(match[1]);
      }
    }
    if (pattern[position] === '?') position++; // lazy quantifier
    return count;
  };
  try {
    const first = parseSequence();
    return first;
  } catch {
    return undefined;
  }
}
