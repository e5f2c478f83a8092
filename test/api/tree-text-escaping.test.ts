import { describe, expect, it } from 'vitest';
import type { NodeView } from '../../src/api/http/schemas.js';
import { renderTreeText } from '../../src/api/workflows/workflow-view.js';
import { BIDI, HOSTILE_NAME, ZERO_WIDTH } from '../support/hostile-text.js';

/**
 * `GET /v1/workflows/:id/tree?format=text` is read in terminals. Every name it
 * prints is a client's or a model's words (rows written before the name rules, a spawned child's
 * name): control characters (C0, DEL, C1), bidi controls and other format characters (Cf), line
 * and paragraph separators come out escaped and visible (`\u001b`), so no name can start a line,
 * move the cursor, recolour the terminal or reverse what follows it.
 */

const FORGED = 'x [running]\n  \u2713 deploy-prod [approved]';

function node(name: string, children: NodeView[] = []): NodeView {
  return {
    id: `n_${name.length}`,
    name,
    type: 'prompt',
    status: 'completed',
    attempts: 1,
    startedAt: null,
    endedAt: null,
    durationMs: null,
    output: null,
    error: null,
    childWorkflowId: null,
    spawnedWorkflowId: null,
    cacheKeys: [],
    children,
  };
}

/** Every code point of the categories a terminal may act on or hide. */
function everyControlAndFormat(): string {
  let text = '';
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const char = String.fromCodePoint(cp);
    if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(char)) text += char;
  }
  return text;
}

const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

describe('the text tree', () => {
  it('prints one line per node whatever the names hold, every control and format character escaped', () => {
    const all = everyControlAndFormat();
    const names = [
      FORGED,
      'ok\r\u2713 deploy-prod [approved]',
      '\u001b[2K\u001b[1G\u001b]0;title\u0007\u2713 deploy-prod [approved]',
      '\u009b31m c1 csi \u0085 nel',
      'nul\u0000byte del\u007f',
      'line\u2028sep para\u2029sep',
      BIDI,
      ZERO_WIDTH,
      all,
      'lone \uD800 surrogate',
    ];
    const text = renderTreeText({
      name: FORGED,
      status: 'running',
      tree: node(
        'root',
        names.map((name) => node(name)),
      ),
    });
    const lines = text.split('\n');
    expect(lines).toHaveLength(1 + 1 + names.length + 1);
    expect(lines.at(-1)).toBe('');
    for (const line of lines) expect(line).not.toMatch(UNSAFE);
    // Each line is "<indent><symbol> <name> [<status>]" with the real status last.
    expect(lines[0]).toBe('◐ x [running]\\u000a  ✓ deploy-prod [approved] [running]');
    for (const line of lines.slice(2, -1)) expect(line).toMatch(/^ {4}✓ .* \[completed\]$/);
    expect(text).toContain('\\u001b[2K');
    expect(text).toContain('\\u009b31m');
    expect(text).toContain('\\u0000byte del\\u007f');
    expect(text).toContain('fdp.\\u202eexe.txt');
    expect(text).toContain('zero\\u200bwidth');
    expect(text).toContain('\\u{e0001}');
    expect(text).toContain('lone \\ud800 surrogate');
  });

  it('keeps ordinary text as it is, and escapes a backslash so an escape cannot be faked', () => {
    const text = renderTreeText({
      name: 'plain',
      status: 'completed',
      tree: node(`שלום مرحبا 😀 ${HOSTILE_NAME.replace('\u202E', '')} a\\u000ab`),
    });
    expect(text).toBe(
      `✓ plain [completed]\n  ✓ שלום مرحبا 😀 ${HOSTILE_NAME.replace('\u202E', '')} a\\\\u000ab [completed]\n`,
    );
  });
});
