import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every `docs/<page>.md` or `docs/<page>.md#anchor` a comment, a test or a top-level document cites
 * resolves: the page exists in the repository and the anchor is one of its headings (GitHub's slug:
 * lower case, punctuation dropped, spaces to hyphens). No comment cites a design outside the repo.
 */
const ROOTS = ['src', 'test', 'bench', 'scripts'];
const TOP = ['README.md', 'ARCHITECTURE.md'];

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : walk(rel);
    return /\.(ts|mts|mjs|js|sql|md)$/.test(entry.name) ? [rel] : [];
  });
}

function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(page: string): Set<string> {
  const headings = readFileSync(page, 'utf8')
    .split('\n')
    .filter((line) => /^#{1,6} /.test(line))
    .map((line) => slug(line.replace(/^#+ /, '')));
  return new Set(headings);
}

const sources = [...ROOTS.filter(existsSync).flatMap(walk), ...TOP, 'migrations'].flatMap((p) =>
  p === 'migrations' ? walk(p) : [p],
);

describe('docs references', () => {
  it('every docs/… page and anchor cited resolves to a heading that exists', () => {
    const broken: string[] = [];
    let seen = 0;
    const anchors = new Map<string, Set<string>>();
    for (const file of sources) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(/docs\/([\w-]+\.md)(#[\w-]+)?/g)) {
        seen += 1;
        const page = `docs/${match[1]}`;
        if (!existsSync(page)) {
          broken.push(`${file}: ${match[0]} (no such page)`);
          continue;
        }
        const anchor = match[2]?.slice(1);
        if (anchor === undefined) continue;
        const known = anchors.get(page) ?? anchorsOf(page);
        anchors.set(page, known);
        if (!known.has(anchor)) broken.push(`${file}: ${match[0]} (no such heading)`);
      }
    }
    expect(seen).toBeGreaterThan(100);
    expect(broken).toEqual([]);
  });

  it('no comment cites the design document outside the repository', () => {
    const outside = sources.filter((file) => /DESIGN §|shared\/DESIGN/.test(readFileSync(file, 'utf8')));
    expect(outside.filter((file) => file !== 'test/unit/docs-references.test.ts')).toEqual([]);
  });

  it('slugs headings as GitHub does', () => {
    expect(slug('Complexity, allocation, selection and review')).toBe('complexity-allocation-selection-and-review');
    expect(slug('Units: calls and requests')).toBe('units-calls-and-requests');
  });
});
