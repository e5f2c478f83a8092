import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../src/config.js';

/**
 * The README and the docs pages are documentation users follow: the configuration table (one copy, in
 * docs/operations.md "Configuration") and every curl session track the code.
 */
const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const readme = read('README.md');
const pages = readdirSync(new URL('../../docs/', import.meta.url))
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`);
const openapi = JSON.parse(read('openapi/openapi.json')) as {
  paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string }> }>>;
};
const pkg = JSON.parse(read('package.json')) as { engines: { node: string } };

/** The variables named in a configuration table's first column (`| \`A\`, \`B\` | …`). */
function tableVariables(text: string): string[] {
  return [...text.matchAll(/^\| `([A-Z_]+)`(?:, `([A-Z_]+)`)? \|/gm)].flatMap((m) =>
    [m[1], m[2]].filter((v): v is string => v !== undefined),
  );
}

describe('documentation', () => {
  it('documents every configuration variable in docs/operations.md, and only those', () => {
    const section =
      read('docs/operations.md')
        .split(/^## /m)
        .find((s) => s.startsWith('Configuration\n')) ?? '';
    expect(new Set(tableVariables(section))).toEqual(new Set(Object.keys(ConfigSchema.shape)));
  });

  it('keeps one copy of the configuration table', () => {
    const copies = ['README.md', 'ARCHITECTURE.md', ...pages].filter((path) =>
      tableVariables(read(path)).some((name) => name === 'DATABASE_PATH'),
    );
    expect(copies).toEqual(['docs/operations.md']);
  });

  it('uses only query parameters the API has in the curl sessions of the README and docs pages', () => {
    const unknown: string[] = [];
    let seen = 0;
    for (const file of ['README.md', ...pages]) {
      for (const [, path, query] of read(file).matchAll(/\$B(\/v1\/[A-Za-z0-9/$._-]+)\?([^"' ]+)/g)) {
        seen += 1;
        const route = Object.keys(openapi.paths).find((p) =>
          new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`).test((path ?? '').replace(/\$[A-Z]+/g, 'x')),
        );
        const names = new Set((openapi.paths[route ?? '']?.get?.parameters ?? []).map((p) => p.name));
        for (const pair of (query ?? '').split('&')) {
          const name = pair.split('=')[0] ?? '';
          if (!names.has(name)) unknown.push(`${file}: ${path}?${name}`);
        }
      }
    }
    expect(seen).toBeGreaterThan(15);
    expect(unknown).toEqual([]);
  });

  it('promises the Node lines package.json allows', () => {
    // Node 20 (these machines) and the current LTS, 24 (.ci/run runs the suite on both).
    expect(pkg.engines.node).toBe('^20.19.0 || ^24.0.0');
    expect(readme).toContain('`engines: ^20.19.0 || ^24.0.0`');
  });
});
