import { z } from 'zod';
import { tooDeepPath } from '../domain/json-depth.js';
import { AUDIT_LIMITS, BIAS_PATTERNS } from '../tools/description-audit.js';
import { descriptionSites } from '../tools/schema-descriptions.js';

/**
 * HTTP shapes of GET /v1/tools and POST /v1/tools/audit, in snake_case: the audit report is the
 * tools-audit seed's record, and it sits beside tool definitions in the providers' own shape
 * (`input_schema`), which a response may not mix with camelCase.
 */

const { maxTools, maxDescriptionLength, maxSchemaDepth, maxListedFindings } = AUDIT_LIMITS;

/** Every description inside a schema is bounded, and so is its nesting, before the audit reads it. */
const InputSchemaSchema = z
  .record(z.string(), z.unknown())
  .superRefine((schema, ctx) => {
    const deep = tooDeepPath(schema, maxSchemaDepth);
    if (deep) {
      ctx.addIssue({ code: 'custom', path: deep, message: `is nested deeper than ${maxSchemaDepth} levels` });
      return;
    }
    for (const site of descriptionSites({ input_schema: schema })) {
      if (site.text.length <= maxDescriptionLength) continue;
      const path = site.path.split('.').slice(1);
      ctx.addIssue({ code: 'custom', path, message: `must be at most ${maxDescriptionLength} characters` });
    }
  })
  .describe(`JSON Schema of the tool's input, nested at most ${maxSchemaDepth} levels.`);

const ignored = z.unknown().optional().describe('An Anthropic tool field the audit accepts and does not read.');

export const AuditedToolSchema = z.strictObject({
  name: z
    .string()
    .regex(/^[a-zA-Z0-9_-]{1,64}$/, { message: 'must be 1-64 letters, digits, _ or -' })
    .describe('Tool name (Anthropic: 1-64 of a-z A-Z 0-9 _ -).'),
  description: z.string().max(maxDescriptionLength).optional().describe('What the tool does.'),
  input_schema: InputSchemaSchema,
  type: ignored,
  cache_control: ignored,
  strict: ignored,
  defer_loading: ignored,
  allowed_callers: ignored,
  eager_input_streaming: ignored,
  input_examples: ignored,
});

export const ToolAuditRequestSchema = z.strictObject({
  tools: z
    .array(AuditedToolSchema)
    .min(1)
    .max(maxTools)
    .superRefine((tools, ctx) => {
      const first = new Map<string, number>();
      tools.forEach((tool, i) => {
        const earlier = first.get(tool.name);
        if (earlier === undefined) first.set(tool.name, i);
        else ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `repeats tools.${earlier}.name` });
      });
    })
    .describe(`Anthropic tool definitions, 1-${maxTools}, names unique.`),
});

export const ToolDefinitionViewSchema = z.object({
  name: z.string(),
  description: z.string(),
  input_schema: z.record(z.string(), z.unknown()),
});

export const AuditFindingSchema = z.object({
  tool: z.string(),
  path: z.string().describe('`description`, or where in the schema: `input_schema.properties.query.description`.'),
  pattern: z.enum(BIAS_PATTERNS).describe('The detector that matched.'),
  match: z.string().describe('The matched text as written.'),
  index: z.int().min(0).describe('Offset of the match in that description (UTF-16 code units).'),
});

const counts = {
  descriptions_scanned: z.int().min(0).describe('Non-blank descriptions: the tool’s own and every parameter’s.'),
  biased_descriptions: z.int().min(0).describe('Descriptions with at least one finding.'),
  finding_count: z.int().min(0),
  bias_rate: z
    .number()
    .min(0)
    .max(1)
    .describe('biased_descriptions / descriptions_scanned; 0 when nothing was scanned.'),
};

export const ToolAuditSchema = z.object({
  tool: z.string(),
  tier: z
    .literal([0, 1, 2])
    .describe(
      '0: clean, no action. 1: a description rewrite would help (it has findings). 2: a behavioural gap ' +
        '(retrieval engagement of some model more than 30% below the reference), which a rewrite does not fix.',
    ),
  ...counts,
});

export const ByPatternSchema = z
  .object(Object.fromEntries(BIAS_PATTERNS.map((p) => [p, z.int().min(0)])) as Record<string, z.ZodInt>)
  .describe('Findings per detector.');

export const ToolAuditReportSchema = z.object({
  totals: z.object({ tools: z.int().min(0), ...counts }),
  by_pattern: ByPatternSchema,
  tools: z.array(ToolAuditSchema).describe('One entry per tool, in the order given.'),
  findings: z.array(AuditFindingSchema).describe(`Every finding, at most ${maxListedFindings} listed.`),
  findings_truncated: z.boolean().describe(`true when more than ${maxListedFindings} findings were counted.`),
});

export const BuiltInToolListSchema = z.object({
  items: z.array(
    z.object({
      definition: ToolDefinitionViewSchema,
      audit: ToolAuditSchema.extend({ findings: z.array(AuditFindingSchema) }),
    }),
  ),
  totals: ToolAuditReportSchema.shape.totals,
  by_pattern: ByPatternSchema,
});
