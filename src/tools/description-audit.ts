import type { ToolDefinition } from '../domain/llm.js';
import { descriptionSites } from './schema-descriptions.js';

/**
 * The tool description audit (docs/design.md#agent-tools), after the waggle-os Phase 4.5 tools audit: four
 * narrative-bias detectors over every tool and parameter description, the bias rate (biased
 * descriptions / descriptions scanned, "1.0% (3/312)" there), per-pattern and per-tool counts, each
 * finding with its text, and a tier per tool. Pure: no I/O, linear in the size of its input.
 */

export const BIAS_PATTERNS = ['cot-imperative', 'narrative-voice', 'verbose-hedging', 'meta-reference'] as const;
export type BiasPattern = (typeof BIAS_PATTERNS)[number];

/** The detectors' phrases, exactly as the seed lists them. */
export const BIAS_PHRASES: Readonly<Record<BiasPattern, readonly string[]>> = {
  'cot-imperative': ['let me', 'step-by-step', 'step by step', 'carefully consider', 'think about'],
  'narrative-voice': ['you should', 'you might', "you'll want to", 'consider whether'],
  'verbose-hedging': ['generally', 'typically', 'usually', 'might be', 'could be'],
  'meta-reference': ['this tool will', 'this function', 'the agent should', 'the model should'],
};

/**
 * 0: clean (no action). 1: a description rewrite would help (it has findings). 2: a behavioural
 * gap — some model engages the tool more than 30% below the reference model — which a rewrite of
 * the description does not fix; it dominates the other two.
 */
export type AuditTier = 0 | 1 | 2;

/** Bounds of one audit request (enforced at the HTTP boundary; the audit itself never recurses). */
export const AUDIT_LIMITS = {
  maxTools: 200,
  /** Characters of one description, the tool's own or a parameter's. */
  maxDescriptionLength: 10_000,
  /** Nesting of objects and arrays inside one input_schema (`{}` is 1). */
  maxSchemaDepth: 32,
  /** Findings listed in a report; the counts always cover all of them. */
  maxListedFindings: 1_000,
} as const;

export interface AuditFinding {
  tool: string;
  /** `description`, or the path of a schema's description: `input_schema.properties.query.description`. */
  path: string;
  pattern: BiasPattern;
  /** The matched text as written in the description. */
  match: string;
  /** Offset of the match in the description (UTF-16 code units, as in JavaScript). */
  index: number;
}

interface Counts {
  descriptions_scanned: number;
  /** Descriptions with at least one finding. */
  biased_descriptions: number;
  finding_count: number;
  /** biased_descriptions / descriptions_scanned; 0 when nothing was scanned. */
  bias_rate: number;
}

export interface ToolAudit extends Counts {
  tool: string;
  tier: AuditTier;
}

export interface AuditReport {
  totals: Counts & { tools: number };
  /** Findings per detector; every detector is listed. */
  by_pattern: Record<BiasPattern, number>;
  /** One entry per tool, in the order given. */
  tools: ToolAudit[];
  /** In tool order, then description order, then position; at most AUDIT_LIMITS.maxListedFindings. */
  findings: AuditFinding[];
  findings_truncated: boolean;
}

export interface AuditOptions {
  /** Tools on which engagement analytics show a model more than 30% below the reference: Tier 2. */
  behaviouralTools?: ReadonlySet<string>;
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A phrase as a regex: any run of white space between words, a straight or curly apostrophe. */
function phraseSource(phrase: string): string {
  return phrase
    .split(/\s+/)
    .map((word) => escapeRegExp(word).replace(/'/g, "['’]"))
    .join('\\s+');
}

/** Word-bounded on Unicode letters and digits, so "unusually" and "réusually" hold no "usually". */
const DETECTORS: ReadonlyArray<{ pattern: BiasPattern; regex: RegExp }> = BIAS_PATTERNS.map((pattern) => ({
  pattern,
  regex: new RegExp(
    `(?<![\\p{L}\\p{N}_])(?:${BIAS_PHRASES[pattern].map(phraseSource).join('|')})(?![\\p{L}\\p{N}_])`,
    'giu',
  ),
}));

/** Every detector's matches in one text, in order of position. */
export function detectBias(text: string): Array<{ pattern: BiasPattern; match: string; index: number }> {
  const found: Array<{ pattern: BiasPattern; match: string; index: number }> = [];
  for (const { pattern, regex } of DETECTORS) {
    for (const m of text.matchAll(regex)) found.push({ pattern, match: m[0], index: m.index });
  }
  return found.sort((a, b) => a.index - b.index);
}

const rate = (biased: number, scanned: number): number => (scanned === 0 ? 0 : biased / scanned);

function tierOf(name: string, findings: number, options: AuditOptions): AuditTier {
  if (options.behaviouralTools?.has(name)) return 2;
  return findings > 0 ? 1 : 0;
}

export function auditTools(tools: readonly ToolDefinition[], options: AuditOptions = {}): AuditReport {
  const by_pattern = Object.fromEntries(BIAS_PATTERNS.map((p) => [p, 0])) as Record<BiasPattern, number>;
  const findings: AuditFinding[] = [];
  const totals = {
    tools: tools.length,
    descriptions_scanned: 0,
    biased_descriptions: 0,
    finding_count: 0,
    bias_rate: 0,
  };
  const audits = tools.map((tool): ToolAudit => {
    const sites = descriptionSites(tool);
    let biased = 0;
    let count = 0;
    for (const site of sites) {
      const hits = detectBias(site.text);
      if (hits.length > 0) biased += 1;
      count += hits.length;
      for (const hit of hits) {
        by_pattern[hit.pattern] += 1;
        if (findings.length < AUDIT_LIMITS.maxListedFindings)
          findings.push({ tool: tool.name, path: site.path, ...hit });
      }
    }
    totals.descriptions_scanned += sites.length;
    totals.biased_descriptions += biased;
    totals.finding_count += count;
    return {
      tool: tool.name,
      tier: tierOf(tool.name, count, options),
      descriptions_scanned: sites.length,
      biased_descriptions: biased,
      finding_count: count,
      bias_rate: rate(biased, sites.length),
    };
  });
  totals.bias_rate = rate(totals.biased_descriptions, totals.descriptions_scanned);
  return { totals, by_pattern, tools: audits, findings, findings_truncated: totals.finding_count > findings.length };
}
