import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { quickStartExample } from '../../src/api/examples.js';
import { WorkflowDefinitionSchema } from '../../src/domain/definition.js';

describe('examples/review-pr.json (the README curl tour body)', () => {
  it('is the quick-start example Swagger UI shows, and a valid definition', () => {
    const file = JSON.parse(readFileSync(new URL('../../examples/review-pr.json', import.meta.url), 'utf8'));
    expect(file).toEqual(quickStartExample);
    expect(WorkflowDefinitionSchema.safeParse(file).success).toBe(true);
  });
});
