/**
 * Secret redaction (docs/design.md#security), pure. Applied to persisted events and spans, tool outputs, errors
 * and logs. Most values hold no secret, so both functions first run one cheap precompiled test
 * and return their input untouched (same string, same object) when it finds nothing suspicious.
 */

export const REDACTED = '[REDACTED]';

/** Every pattern below contains one of these; text without any of them is returned as is. */
const MAYBE_SECRET = /sk-|bearer|passw|secret|token|api[_-]?key|authorization|credential|cookie/i;

/** `sk-ant-api03-…` (Anthropic) and `sk-…` / `sk-proj-…` (OpenAI-style) keys. */
const PROVIDER_KEY = /\bsk-[A-Za-z0-9_-]{16,}/g;

/** `Bearer <token>`; the scheme word is kept so the text still reads naturally. */
const BEARER_TOKEN = /\b(bearer\s+)([A-Za-z0-9._~+/-]+=*)/gi;

/** `"name": "value"` in JSON text. */
const JSON_STRING_FIELD = /"([^"\\]{1,80})"(\s*:\s*)"(?:[^"\\]|\\.)*"/g;

/** `\"name\": \"value\"`: JSON encoded inside a JSON string (a tool output stored as text). */
const ESCAPED_JSON_STRING_FIELD = /\\"([^"\\]{1,80})\\"(\s*:\s*)\\"(?:[^"\\]|\\\\|\\[^"\\])*\\"/g;

/** `name=value` as in query strings, env dumps and CLI flags. No backslash in the value: inside a
 * JSON log line it would cut an escape sequence in half. */
const ASSIGNMENT = /\b([A-Za-z0-9_-]{1,80})=([^\s&"',;\\]+)/g;

/**
 * `name: value` and `name = value` as people write them in prompts, configs and error texts:
 * `password: hunter2`, `'api_key': 'k'`, `"token" = "t"`, `Authorization: Basic dXNl…`. Spaces and
 * tabs only around the separator, so a `password:` at a line end never takes the next line's word.
 * The value stops before quotes, backslashes and separators so a JSON log line stays valid.
 */
const COLON_FIELD =
  /(^|[^A-Za-z0-9_-])(['"]?)([A-Za-z][A-Za-z0-9_-]{0,79})\2([ \t]*[:=][ \t]*)(?:'([^'\n\\]*)'|"([^"\n\\]*)"|((?:bearer|basic)[ \t]+)?([^\s"'`,;&)}\]\\]+))/gi;

/** Documentation-style stand-ins, not secrets: `tenant:key`, `<key>`, `$API_KEY`, `***`. */
const PLACEHOLDER_WORDS = new Set([
  'tenant',
  'key',
  'keys',
  'value',
  'values',
  'your',
  'api',
  'here',
  'example',
  'placeholder',
  'name',
  'id',
]);
const PLACEHOLDER_SHAPE = /^(?:(?:<[^<>]*>[:,]?)+|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\*+|x{3,}|\.{3}|…|\[REDACTED\])$/i;

function isPlaceholder(value: string): boolean {
  if (PLACEHOLDER_SHAPE.test(value)) return true;
  if (!/^[A-Za-z]+(?:[:,._-]+[A-Za-z]+)*[,…]*$/.test(value)) return false;
  return value
    .split(/[:,._…-]+/)
    .filter(Boolean)
    .every((word) => PLACEHOLDER_WORDS.has(word.toLowerCase()));
}

const SECRET_KEY_HINT = /passw|secret|api[^a-z0-9]*key|authorization|credential|cookie|private[^a-z0-9]*key|token/i;

/**
 * Key names that hold secrets: anything mentioning a password, secret, api key, credential, cookie
 * or authorization, or ending in "token" (`accessToken`, `refresh_token`). Ending, not containing:
 * `maxTokens` / `inputTokens` are usage counts, not secrets.
 */
export function isSecretKey(key: string): boolean {
  // Cheap first test: walking big payloads calls this for every key.
  if (!SECRET_KEY_HINT.test(key)) return false;
  const normalized = key.toLowerCase().replace(/[^a-z0-9]/g, '');
  return (
    /passw|secret|apikey|authorization|credential|cookie|privatekey/.test(normalized) || normalized.endsWith('token')
  );
}

export function redactSecrets(text: string): string {
  if (!MAYBE_SECRET.test(text)) return text;
  const redacted = text
    .replace(PROVIDER_KEY, REDACTED)
    .replace(BEARER_TOKEN, (match, scheme: string, token: string) =>
      looksLikeToken(token) ? `${scheme}${REDACTED}` : match,
    )
    .replace(JSON_STRING_FIELD, (match, key: string, separator: string) =>
      isSecretKey(key) ? `"${key}"${separator}"${REDACTED}"` : match,
    )
    .replace(ESCAPED_JSON_STRING_FIELD, (match, key: string, separator: string) =>
      isSecretKey(key) ? `\\"${key}\\"${separator}\\"${REDACTED}\\"` : match,
    )
    .replace(ASSIGNMENT, (match, key: string, value: string) =>
      isSecretKey(key) && !isPlaceholder(value) ? `${key}=${REDACTED}` : match,
    );
  return redactColonFields(redacted);
}

/**
 * COLON_FIELD over the whole text. A match whose key is harmless is not skipped whole: its quoted
 * value may hold a field of its own (`"msg": "user said password: x"`), so scanning resumes after
 * the key.
 */
function redactColonFields(text: string): string {
  let out = '';
  let copied = 0;
  COLON_FIELD.lastIndex = 0;
  for (let m = COLON_FIELD.exec(text); m !== null; m = COLON_FIELD.exec(text)) {
    const [match, before = '', quote = '', key = ''] = m;
    const replacement = redactColonField(match, before, quote, key, m[4] ?? '', m[5], m[6], m[7], m[8]);
    if (replacement === match) {
      COLON_FIELD.lastIndex = m.index + before.length + quote.length + key.length;
      continue;
    }
    out += text.slice(copied, m.index) + replacement;
    copied = m.index + match.length;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

function redactColonField(
  match: string,
  before: string,
  quote: string,
  key: string,
  separator: string,
  singleQuoted: string | undefined,
  doubleQuoted: string | undefined,
  scheme: string | undefined,
  bare: string | undefined,
): string {
  const value = singleQuoted ?? doubleQuoted ?? bare ?? '';
  // `[REDACTED` (the bare value stops before `]`): an earlier rule has redacted it already.
  if (!isSecretKey(key) || value === '' || value.startsWith('[REDACTED') || isPlaceholder(value)) return match;
  // `"token": 5` is JSON (a string value is JSON_STRING_FIELD's): rewriting it would break the document.
  if (quote === '"' && bare !== undefined) return match;
  const head = `${before}${quote}${key}${quote}${separator}`;
  if (singleQuoted !== undefined) return `${head}'${REDACTED}'`;
  if (doubleQuoted !== undefined) return `${head}"${REDACTED}"`;
  return `${head}${scheme ?? ''}${REDACTED}`;
}

/**
 * A URL for a log line. Percent-encoding hides a secret from the line's redaction
 * (`?q=password%3A%20hunter2`), so the decoded URL is looked at too: when it holds a secret, the
 * line shows it decoded and redacted; otherwise the URL as it came (a plain secret in it is still
 * caught by the logger's redaction of every line).
 */
export function redactUrl(url: string): string {
  if (!url.includes('%') && !url.includes('+')) return url;
  let decoded: string;
  try {
    decoded = decodeURIComponent(url.replace(/\+/g, ' '));
  } catch {
    // Malformed escapes: nothing is hidden behind them.
    return url;
  }
  const redacted = redactSecrets(decoded);
  return redacted === decoded ? url : redacted;
}

/** "Bearer of bad news" is prose; a token is long or carries digits/punctuation. */
function looksLikeToken(candidate: string): boolean {
  return candidate.length >= 20 || /[0-9._~+/=-]/.test(candidate);
}

/** Deeper than this, a value is replaced rather than walked (recursion must not blow the stack). */
const MAX_DEPTH = 200;

/**
 * Deep copy-on-write redaction of JSON-like data: values under secret-named keys become
 * `[REDACTED]`, strings go through `redactSecrets`, cycles become `[Circular]`. The input is never
 * mutated; parts without secrets are shared with it, and a value with no secret at all is
 * returned as the same reference. Only arrays and plain objects are walked; other objects (Date,
 * Buffer, Map…) pass through unchanged.
 */
export function redactValue(value: unknown): unknown {
  return walk(value, [], 0);
}

/**
 * `ancestors` is the path from the root: a cycle is a value that is its own ancestor. An array
 * beats a Set here: paths are short, and most payloads are walked without any secret in them.
 */
function walk(value: unknown, ancestors: object[], depth: number): unknown {
  if (typeof value === 'string') return redactSecrets(value);
  if (value === null || typeof value !== 'object') return value;
  if (ancestors.includes(value)) return '[Circular]';
  if (depth >= MAX_DEPTH) return '[Truncated]';

  if (Array.isArray(value)) {
    ancestors.push(value);
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i += 1) {
      const item: unknown = value[i];
      const redacted = walk(item, ancestors, depth + 1);
      if (redacted !== item) {
        copy ??= value.slice();
        copy[i] = redacted;
      }
    }
    ancestors.pop();
    return copy ?? value;
  }

  if (!isPlainObject(value)) return value;
  ancestors.push(value);
  let copy: Record<string, unknown> | undefined;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const field = value[key];
    const redacted =
      field !== null && field !== undefined && isSecretKeyCached(key) ? REDACTED : walk(field, ancestors, depth + 1);
    if (redacted !== field) {
      copy ??= { ...value };
      copy[key] = redacted;
    }
  }
  ancestors.pop();
  return copy ?? value;
}

/** Payload keys come from a small vocabulary (field names), so their verdicts are memoised. */
const secretKeyVerdicts = new Map<string, boolean>();
const MAX_MEMOISED_KEYS = 10_000;

function isSecretKeyCached(key: string): boolean {
  let verdict = secretKeyVerdicts.get(key);
  if (verdict === undefined) {
    verdict = isSecretKey(key);
    // Bounded: keys drawn from data (e.g. ids used as keys) must not grow the map forever.
    if (secretKeyVerdicts.size >= MAX_MEMOISED_KEYS) secretKeyVerdicts.clear();
    secretKeyVerdicts.set(key, verdict);
  }
  return verdict;
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
