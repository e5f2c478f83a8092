import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../src/config.js';

/** The README is documentation users follow: its configuration table and its curl tour track the code. */
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const openapi = JSON.parse(readFileSync(new URL('../../openapi/openapi.json', import.meta.url), 'utf8')) as {
  paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string }> }>>;
};
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  engines: { node: string };
};

describe('README', () => {
  it('documents every configuration variable, and only those', () => {
    const table = [...readme.matchAll(/^\| `([A-Z_]+)`(?:, `([A-Z_]+)`)? \|/gm)].flatMap((m) =>
      [m[1], m[2]].filter((v): v is string => v !== undefined),
    );
    expect(new Set(table)).toEqual(new Set(Object.keys(ConfigSchema.shape)));
  });

  it('uses only query parameters the API has in its curl tour', () => {
    const unknown: string[] = [];
    for (const [, path, query] of readme.matchAll(/\$B(\/v1\/[A-Za-z0-9/$._-]+)\?([^"' ]+)/g)) {
      const route = Object.keys(openapi.paths).find((p) =>
        new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`).test((path ?? '').replace(/\$[A-Z]+/g, 'x')),
      );
      const names = new Set((openapi.paths[route ?? '']?.get?.parameters ?? []).map((p) => p.name));
      for (const pair of (query ?? '').split('&')) {
        const name = pair.split('=')[0] ?? '';
        if (!names.has(name)) unknown.push(`${path}?${name}`);
      }
    }
    expect(unknown).toEqual([]);
  });

  it('promises the Node lines package.json allows', () => {
    // Node 20 (these machines) and the current LTS, 24 (.ci/run runs the suite on both).
    expect(pkg.engines.node).toBe('^20.19.0 || ^24.0.0');
    expect(readme).toContain('`engines: ^20.19.0 || ^24.0.0`');
  });
});
