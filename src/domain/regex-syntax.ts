/**
 * User regexes (JSON Schema `pattern`, `patternProperties`) run on RE2, a linear-time engine, so no
 * pattern can freeze the event loop by backtracking (docs/design.md#security). RE2 reads the JSON Schema
 * (ECMA-262) syntax a schema author writes, except the `\uXXXX` / `\u{…}` escapes, which it spells
 * `\x{…}`: this rewrites them and leaves everything else — RE2 refuses lookarounds, backreferences
 * and repetition counts above 1000 itself, which is what makes it linear.
 */
export function toRe2Syntax(pattern: string): string {
  if (!pattern.includes('\\u')) return pattern;
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i] as string;
    if (char !== '\\') {
      out += char;
      continue;
    }
    const next = pattern[i + 1] ?? '';
    const fixed = /^[0-9A-Fa-f]{4}/.exec(pattern.slice(i + 2, i + 6));
    const braced = /^\{([0-9A-Fa-f]{1,6})\}/.exec(pattern.slice(i + 2, i + 10));
    if (next === 'u' && braced) {
      out += `\\x{${braced[1]}}`;
      i += 1 + braced[0].length;
    } else if (next === 'u' && fixed) {
      out += `\\x{${fixed[0]}}`;
      i += 5;
    } else {
      // Any other escape (`\\`, `\d`, `\/`…) is copied whole so its second character is not re-read.
      out += char + next;
      i += 1;
    }
  }
  return out;
}
