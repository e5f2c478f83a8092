import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { quickStartExample, toolAuditExample } from '../../src/api/http/examples.js';
import { ToolAuditRequestSchema } from '../../src/api/tool-audit-view.js';
import { WorkflowDefinitionSchema } from '../../src/domain/definition.js';

describe('examples/review-pr.json (the README curl tour body)', () => {
  it('is the quick-start example Swagger UI shows, and a valid definition', () => {
    const file = JSON.parse(readFileSync(new URL('../../examples/review-pr.json', import.meta.url), 'utf8'));
    expect(file).toEqual(quickStartExample);
    expect(WorkflowDefinitionSchema.safeParse(file).success).toBe(true);
  });
});

describe('examples/tool-audit.json (the README tool audit body)', () => {
  it('is the example Swagger UI shows for POST /v1/tools/audit, and a valid request', () => {
    const file = JSON.parse(readFileSync(new URL('../../examples/tool-audit.json', import.meta.url), 'utf8'));
    expect(file).toEqual(toolAuditExample);
    expect(ToolAuditRequestSchema.safeParse(file).success).toBe(true);
  });
});

describe('the README tool, retrieval and review session bodies', () => {
  it.each(['introspection.json', 'retrieval-json-actions.json', 'retrieval-guard.json', 'review-node.json'])(
    '%s is a valid definition',
    (name) => {
      const file = JSON.parse(readFileSync(new URL(`../../examples/${name}`, import.meta.url), 'utf8'));
      expect(WorkflowDefinitionSchema.safeParse(file).success).toBe(true);
    },
  );
});
