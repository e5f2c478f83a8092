import type { FastifyInstance } from 'fastify';

/**
 * The JSON body parser: fastify's own (with its prototype-poisoning checks), plus where the text
 * stops being JSON when it fails, since fastify's error only says "Body is not valid JSON". The
 * error handler turns the location into the message.
 */

export interface JsonSyntaxLocation {
  /** 1-based. */
  line: number;
  column: number;
  /** The offending character; undefined when the text ended too early. */
  found: string | undefined;
  /** V8's reason when it is more than "unexpected …" (e.g. "expected ':' after property name"). */
  expected: string | undefined;
}

/** Why fastify rejected the body: a syntax error (located when V8 says where) or a forbidden key. */
export type InvalidJson = { kind: 'syntax'; at: JsonSyntaxLocation | undefined } | { kind: 'forbidden-key' };

/** Carried by fastify's FST_ERR_CTP_INVALID_JSON_BODY error. */
export interface InvalidJsonError {
  invalidJson?: InvalidJson;
}

function locate(text: string, reason: string): JsonSyntaxLocation | undefined {
  // "… in JSON at position 13", "… after JSON at position 8"; the end of input has no position.
  const match = /^(.*?)\s+(?:in JSON\s+)?at position (\d+)/.exec(reason);
  if (match === null && !/end of JSON input/.test(reason)) return undefined;
  const position = match ? Number(match[2]) : text.length;
  const before = text.slice(0, position);
  const cause = match?.[1] ?? '';
  return {
    line: before.split('\n').length,
    column: position - before.lastIndexOf('\n'),
    found: position < text.length ? text.charAt(position) : undefined,
    expected: /^Expected /.test(cause) ? `e${cause.slice(1)}` : undefined,
  };
}

/** Re-parses a body fastify refused (only failures pay for it) to say why. */
export function explainInvalidJson(text: string): InvalidJson {
  try {
    JSON.parse(text);
  } catch (err) {
    return { kind: 'syntax', at: locate(text, err instanceof Error ? err.message : '') };
  }
  // Valid JSON that fastify's parser still refused: it holds a __proto__ or constructor.prototype key.
  return { kind: 'forbidden-key' };
}

export function registerJsonBodyParser(app: FastifyInstance): void {
  const { onProtoPoisoning = 'error', onConstructorPoisoning = 'error' } = app.initialConfig;
  const parse = app.getDefaultJsonParser(onProtoPoisoning, onConstructorPoisoning);
  app.removeContentTypeParser('application/json');
  // fastify parses text/plain into a string by default; a JSON text sent that way is a 415 naming
  // application/json instead (a text/plain POST is a simple cross-site request: no preflight).
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    // parseAs: 'string' hands over a string; the type is the union of both parseAs modes.
    const text = String(body);
    parse(request, text, (err, value) => {
      if (err && (err as { code?: string }).code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
        (err as InvalidJsonError).invalidJson = explainInvalidJson(text);
      }
      done(err, value);
    });
  });
}
