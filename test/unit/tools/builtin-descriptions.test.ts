import { describe, expect, it } from 'vitest';
import { auditTools } from '../../../src/tools/description-audit.js';
import { createToolRegistry } from '../../../src/tools/registry.js';

/**
 * docs/design.md#agent-tools: baton's own tool descriptions audit as Tier 0. The registry's own list is audited,
 * so a tool added to it later is covered without touching this test.
 */
describe("baton's built-in tools", () => {
  const registry = createToolRegistry({ maxResultBytes: 64 * 1024 });
  const definitions = registry.definitions(registry.names());

  it('are all listed', () => {
    expect(definitions.length).toBeGreaterThan(0);
    expect(definitions.map((d) => d.name)).toEqual(registry.names());
  });

  it('audit as Tier 0: no finding in any tool or parameter description', () => {
    const report = auditTools(definitions);
    expect(report.findings).toEqual([]);
    expect(report.tools.filter((t) => t.tier !== 0)).toEqual([]);
    expect(report.totals.descriptions_scanned).toBeGreaterThanOrEqual(definitions.length);
  });
});
