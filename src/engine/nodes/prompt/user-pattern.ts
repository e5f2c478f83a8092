import type { CodeOptions } from 'ajv';
import { RE2JS, RE2JSSyntaxException } from 're2js';
import { toRe2Syntax } from '../../../domain/regex-syntax.js';

/**
 * Every regex a user supplies runs here, on RE2JS: matching is linear in the input, so a pattern
 * like `^(a+)+$` costs microseconds instead of freezing the event loop (docs/design.md#security). Compiling
 * throws for what RE2 refuses (lookarounds, backreferences, repetition counts above 1000); the
 * submission check reports that as a 400 naming the keyword.
 */
export function compileUserPattern(pattern: string): RE2JS {
  return RE2JS.compile(toRe2Syntax(pattern));
}

/** ajv's `code.regExp` (used for `pattern` and `patternProperties`): a RegExp-like `test`. */
export const linearRegExp: NonNullable<CodeOptions['regExp']> = Object.assign(
  (pattern: string) => {
    const compiled = compileUserPattern(pattern);
    // ajv keys its scope of compiled patterns by toString(): one entry per pattern text.
    return { test: (text: string) => compiled.test(text), toString: () => `/${pattern}/` };
  },
  { code: 're2js' },
);

/** RE2's own reason, without its prefix: "invalid repeat count: `{50000000}`". */
export function patternError(err: unknown): string {
  // Only RE2's syntax messages are about the pattern; anything else is not shown to the user.
  if (!(err instanceof RE2JSSyntaxException)) return 'cannot be compiled';
  return err.message.replace(/^error parsing regexp:\s*/, '');
}
