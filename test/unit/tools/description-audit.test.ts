import { describe, expect, it } from 'vitest';
import type { ToolDefinition } from '../../../src/domain/llm.js';
import { AUDIT_LIMITS, auditTools, BIAS_PATTERNS, detectBias } from '../../../src/tools/description-audit.js';

const tool = (name: string, description: string, input_schema: Record<string, unknown> = {}): ToolDefinition => ({
  name,
  description,
  input_schema: { type: 'object', ...input_schema },
});

const patterns = (text: string) => detectBias(text).map((f) => f.pattern);
const matches = (text: string) => detectBias(text).map((f) => f.match);

describe('the four detectors (docs/design.md#agent-tools, the waggle-os tools audit)', () => {
  it('flags the seed’s own biased descriptions', () => {
    expect(patterns('Step-by-step workflow instructions...')).toEqual(['cot-imperative']);
    expect(
      patterns(
        'Search for skills and tools you might need. Searches installed skills by content/name, and suggests built-in capabilities.',
      ),
    ).toEqual(['narrative-voice']);
  });

  it('finds nothing in a clean imperative description', () => {
    expect(detectBias('Return the chunks of the corpus most relevant to the query.')).toEqual([]);
  });

  it('knows every phrase of every detector, case-insensitively', () => {
    const cases: Record<string, string> = {
      'Let me see': 'cot-imperative',
      'Go STEP BY STEP': 'cot-imperative',
      'Carefully consider the input': 'cot-imperative',
      'Think about it': 'cot-imperative',
      'You should pass': 'narrative-voice',
      "You'll want to set": 'narrative-voice',
      'Consider whether to': 'narrative-voice',
      'Generally fast': 'verbose-hedging',
      'Typically one': 'verbose-hedging',
      'Usually one': 'verbose-hedging',
      'It could be empty': 'verbose-hedging',
      'This tool will fetch': 'meta-reference',
      'This function fetches': 'meta-reference',
      'The agent should call it': 'meta-reference',
      'The model should call it': 'meta-reference',
    };
    for (const [text, pattern] of Object.entries(cases)) expect(patterns(text), text).toEqual([pattern]);
    // Two detectors can see the same words: "you might" is narrative, "might be" is hedging.
    expect(patterns('you might be asked')).toEqual(['narrative-voice', 'verbose-hedging']);
  });

  it('holds word boundaries, Unicode letters included', () => {
    expect(matches('usually')).toEqual(['usually']);
    expect(detectBias('an unusually large corpus')).toEqual([]);
    expect(matches('generally')).toEqual(['generally']);
    expect(detectBias('degenerally, atypically, réusually, letme, this functional, thinking about')).toEqual([]);
    expect(matches('(usually), usually. "typically"')).toEqual(['usually', 'usually', 'typically']);
  });

  it('matches straight and curly apostrophes, and any white space between words', () => {
    expect(matches('you’ll want to')).toEqual(['you’ll want to']);
    expect(matches("You'll want to")).toEqual(["You'll want to"]);
    expect(matches('you\u2019ll\n  want to')).toEqual(['you\u2019ll\n  want to']);
    expect(detectBias('youll want to')).toEqual([]);
  });

  it('reports the text as written and where it starts', () => {
    expect(detectBias('Fetch it. Usually fast.')).toEqual([
      { pattern: 'verbose-hedging', match: 'Usually', index: 10 },
    ]);
  });
});

describe('auditTools', () => {
  it('scans the tool description and every nested parameter description', () => {
    const report = auditTools([
      tool('search', 'Search the corpus.', {
        properties: {
          query: { type: 'string', description: 'You should keep it short.' },
          filter: {
            type: 'object',
            description: 'Filters.',
            properties: { tags: { type: 'array', items: { type: 'string', description: 'Usually one tag.' } } },
          },
          mode: { anyOf: [{ const: 'a', description: 'This function is fast.' }, { const: 'b' }] },
          ref: { $ref: '#/$defs/Ref' },
          description: { type: 'string', description: 'Clean.' },
        },
        $defs: { Ref: { type: 'string', description: 'Let me explain.' } },
        default: { description: 'you should not be scanned: this is data, not a schema' },
      }),
    ]);
    expect(report.findings.map((f) => [f.path, f.pattern, f.match])).toEqual([
      ['input_schema.properties.query.description', 'narrative-voice', 'You should'],
      ['input_schema.properties.filter.properties.tags.items.description', 'verbose-hedging', 'Usually'],
      ['input_schema.properties.mode.anyOf.0.description', 'meta-reference', 'This function'],
      ['input_schema.$defs.Ref.description', 'cot-imperative', 'Let me'],
    ]);
    expect(report.totals).toEqual({
      tools: 1,
      descriptions_scanned: 7,
      biased_descriptions: 4,
      finding_count: 4,
      bias_rate: 4 / 7,
    });
    expect(report.by_pattern).toEqual({
      'cot-imperative': 1,
      'narrative-voice': 1,
      'verbose-hedging': 1,
      'meta-reference': 1,
    });
    expect(report.findings_truncated).toBe(false);
  });

  it('counts per tool and tiers each: 0 clean, 1 has findings, 2 behavioural', () => {
    const report = auditTools(
      [
        tool('clean', 'Return the chunks of the corpus most relevant to the query.'),
        tool('hedgy', 'Usually returns one row; typically fast.'),
        tool('retrieve', 'Return up to 8 chunks.'),
      ],
      { behaviouralTools: new Set(['retrieve']) },
    );
    expect(report.tools).toEqual([
      { tool: 'clean', tier: 0, descriptions_scanned: 1, biased_descriptions: 0, finding_count: 0, bias_rate: 0 },
      { tool: 'hedgy', tier: 1, descriptions_scanned: 1, biased_descriptions: 1, finding_count: 2, bias_rate: 1 },
      { tool: 'retrieve', tier: 2, descriptions_scanned: 1, biased_descriptions: 0, finding_count: 0, bias_rate: 0 },
    ]);
    expect(report.totals).toMatchObject({
      tools: 3,
      descriptions_scanned: 3,
      biased_descriptions: 1,
      finding_count: 2,
    });
    expect(report.totals.bias_rate).toBeCloseTo(1 / 3);
  });

  it('skips blank descriptions and answers zeros for no tools', () => {
    expect(auditTools([tool('a', '  ')]).totals).toMatchObject({ descriptions_scanned: 0, bias_rate: 0 });
    const empty = auditTools([]);
    expect(empty.totals).toEqual({
      tools: 0,
      descriptions_scanned: 0,
      biased_descriptions: 0,
      finding_count: 0,
      bias_rate: 0,
    });
    expect(Object.keys(empty.by_pattern)).toEqual([...BIAS_PATTERNS]);
  });

  it('lists at most maxListedFindings findings but counts them all', () => {
    const many = AUDIT_LIMITS.maxListedFindings + 5;
    const report = auditTools([tool('loud', 'usually '.repeat(many))]);
    expect(report.findings).toHaveLength(AUDIT_LIMITS.maxListedFindings);
    expect(report.totals.finding_count).toBe(many);
    expect(report.findings_truncated).toBe(true);
  });

  it('walks deep and cyclic schemas without recursion', () => {
    let deep: Record<string, unknown> = { type: 'string', description: 'usually' };
    for (let i = 0; i < 20_000; i++) deep = { type: 'array', items: deep };
    expect(auditTools([tool('deep', 'Deep.', { properties: { x: deep } })]).totals.finding_count).toBe(1);
    const cyclic: Record<string, unknown> = { type: 'object', description: 'Typically cyclic.' };
    cyclic.properties = { self: cyclic };
    expect(auditTools([{ name: 'cyclic', description: 'C.', input_schema: cyclic }]).totals.finding_count).toBe(1);
  });
});
