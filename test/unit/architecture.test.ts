import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * docs/design.md#architecture-and-floors: every import points down a floor (or stays inside its own module folder),
 * adapters
 * are wired only by deps.ts/main.ts, heavy packages stay in their adapters, and nothing forms a
 * cycle. Imports are read with the TypeScript parser, so comments and strings never count.
 *
 * Cycles are searched over every import, type-only ones included: an erased type import cannot
 * break evaluation order, but a type-level cycle is still two modules that each need the other to
 * be understood — the hub the engine's runners once formed around `Run`. Types both sides need go
 * into a types-only file below them (engine/node-context.ts).
 *
 * Engine rules: only the executor may import the Run (node handlers get a NodeContext); the rooms
 * point one way (roomViolation); and a node kind is dispatched on only in the handler table
 * (src/engine/nodes/) and the definition's own shape (src/domain/definition.ts).
 */

type Layer = { floor: number; module: string; kind: 'entry' | 'api' | 'engine' | 'policy' | 'adapter' | 'ground' };

const POLICY_MODULES = ['reflection', 'metrics', 'tools', 'routing'];
const ADAPTER_MODULES = ['store', 'llm', 'cache', 'tracing', 'inproc', 'logging', 'telemetry'];
/** Packages that tie code to a transport, a database or a vendor; not for engine/ or policy code. */
const INFRASTRUCTURE_PACKAGES = [
  'fastify',
  'better-sqlite3',
  'pg',
  'graphile-worker',
  '@anthropic-ai/sdk',
  'pino',
  'fastify-type-provider-zod',
];

/** Where a file under src/ sits; undefined for a file on no floor (the test then asks to place it). */
function layerOf(file: string): Layer | undefined {
  const rel = file.replace(/^src\//, '');
  const [top = '', ...rest] = rel.split('/');
  if (rest.length === 0) {
    const byRootFile: Record<string, Layer> = {
      'main.ts': { floor: 6, module: 'main.ts', kind: 'entry' },
      'app.ts': { floor: 5, module: 'app.ts', kind: 'entry' },
      'deps.ts': { floor: 4, module: 'deps.ts', kind: 'entry' },
      'config.ts': { floor: 1, module: 'config.ts', kind: 'ground' },
    };
    return byRootFile[top];
  }
  if (top === 'api') return { floor: 4, module: top, kind: 'api' };
  if (top === 'engine') return { floor: 3, module: top, kind: 'engine' };
  if (POLICY_MODULES.includes(top)) return { floor: 2, module: top, kind: 'policy' };
  if (ADAPTER_MODULES.includes(top)) return { floor: 2, module: top, kind: 'adapter' };
  if (top === 'domain') return { floor: 1, module: top, kind: 'ground' };
  return undefined;
}

interface ImportRef {
  specifier: string;
  /** `import type` / `export type … from` / `typeof import(…)`: erased at run time. */
  typeOnly: boolean;
}

/**
 * Every module reference in one file. `import { type A } from` is NOT type-only: under
 * verbatimModuleSyntax it still loads the module (`import {} from …`).
 */
function importsOf(fileName: string, source: string): ImportRef[] {
  const sourceFile = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const refs: ImportRef[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      refs.push({ specifier: node.moduleSpecifier.text, typeOnly: node.importClause?.isTypeOnly ?? false });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      refs.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteralLike(argument)) refs.push({ specifier: argument.text, typeOnly: false });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const literal = node.argument.literal;
      if (ts.isStringLiteral(literal)) refs.push({ specifier: literal.text, typeOnly: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return refs;
}

function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

/** `./x.js` from src/a/b.ts → src/a/x.ts (NodeNext imports name the emitted .js file). */
function resolveRelative(from: string, specifier: string, known: ReadonlySet<string>): string {
  const joined = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  if (/\.[cm]?js$/.test(joined)) return joined.replace(/\.([cm]?)js$/, '.$1ts');
  if (known.has(`${joined}.ts`)) return `${joined}.ts`;
  if (known.has(`${joined}/index.ts`)) return `${joined}/index.ts`;
  return joined;
}

interface ArchitectureReport {
  violations: string[];
  filesScanned: number;
  importsScanned: number;
}

/** Checks a set of files keyed by repo-relative posix path (`src/engine/run.ts`). */
function checkArchitecture(files: ReadonlyMap<string, string>): ArchitectureReport {
  const known = new Set(files.keys());
  const violations: string[] = [];
  const edges = new Map<string, Set<string>>();
  let importsScanned = 0;

  for (const [file, source] of [...files].sort(([a], [b]) => a.localeCompare(b))) {
    const layer = layerOf(file);
    if (!layer) {
      violations.push(
        `${file} sits on no floor of docs/design.md#architecture-and-floors: place its folder in test/unit/architecture.test.ts`,
      );
      continue;
    }
    const targets = new Set<string>();
    edges.set(file, targets);

    for (const { specifier, typeOnly } of importsOf(file, source)) {
      importsScanned += 1;
      const where = `${file} imports '${specifier}'`;
      if (specifier.startsWith('.')) {
        const target = resolveRelative(file, specifier, known);
        if (!target.startsWith('src/')) {
          if (!target.endsWith('.json')) violations.push(`${where}: reaches outside src/`);
          continue;
        }
        if (known.has(target)) targets.add(target);
        if (target === RUN_FILE && file !== 'src/engine/executor.ts') {
          violations.push(
            `${where}: only src/engine/executor.ts may import the Run; node handlers receive a NodeContext`,
          );
        }
        const room = roomViolation(file, target, typeOnly);
        if (room) violations.push(`${where}: ${room}`);
        const violation = relativeViolation(layer, target, typeOnly);
        if (violation) violations.push(`${where} (${target}): ${violation}`);
      } else {
        const violation = packageViolation(file, layer, specifier);
        if (violation) violations.push(`${where}: ${violation}`);
      }
    }
  }

  for (const cycle of findCycles(edges)) violations.push(`import cycle: ${cycle.join(' → ')}`);
  for (const [file, source] of files) violations.push(...kindDispatches(file, source));
  return { violations, filesScanned: files.size, importsScanned };
}

const RUN_FILE = 'src/engine/run/run.ts';
/** What the rest of the engine gives node handlers: the runtime contract and the stop helpers. */
const NODE_HANDLER_IMPORTS = new Set(['src/engine/node-context.ts', 'src/engine/errors.ts']);

/**
 * The engine's rooms point one way: run/ (every step) may use submission/ (once per POST) and
 * nodes/; submission/ may use nodes/ (a kind's checks); nodes/ use neither, only the contract in
 * node-context.ts and errors.ts. api/ takes from engine/ only the executor's types.
 */
function roomViolation(file: string, target: string, typeOnly: boolean): string | undefined {
  if (!target.startsWith('src/engine/')) return undefined;
  if (
    file.startsWith('src/engine/nodes/') &&
    !target.startsWith('src/engine/nodes/') &&
    !NODE_HANDLER_IMPORTS.has(target)
  ) {
    return 'engine/nodes/ may import of the engine only node-context.ts, errors.ts and nodes/';
  }
  if (file.startsWith('src/engine/submission/') && target.startsWith('src/engine/run/')) {
    return 'engine/submission/ never imports engine/run/';
  }
  if (file.startsWith('src/api/') && !(target === 'src/engine/executor.ts' && typeOnly)) {
    return "api/ takes from engine/ only the executor's types";
  }
  return undefined;
}

const NODE_KIND_NAMES = new Set(['prompt', 'sequence', 'parallel', 'workflow']);
const MAY_DISPATCH_ON_KINDS = (file: string): boolean =>
  file.startsWith('src/engine/nodes/') || file === 'src/domain/definition.ts';

/** `x.type === 'prompt'` and `case 'prompt':` under `switch (x.type)`, outside the handler table. */
function kindDispatches(file: string, source: string): string[] {
  if (MAY_DISPATCH_ON_KINDS(file)) return [];
  const sourceFile = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: string[] = [];
  const isTypeAccess = (node: ts.Node): boolean => ts.isPropertyAccessExpression(node) && node.name.text === 'type';
  const isKind = (node: ts.Node): boolean => ts.isStringLiteral(node) && NODE_KIND_NAMES.has(node.text);
  const report = (node: ts.Node, what: string): void => {
    const line = sourceFile.getLineAndCharacterOfPosition(node.getStart()).line + 1;
    found.push(`${file}:${line} ${what}: node kinds are handled in the handler table (src/engine/nodes/table.ts)`);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isBinaryExpression(node)) {
      const op = node.operatorToken.kind;
      const equality =
        op === ts.SyntaxKind.EqualsEqualsEqualsToken || op === ts.SyntaxKind.ExclamationEqualsEqualsToken;
      const pair = (isTypeAccess(node.left) && isKind(node.right)) || (isTypeAccess(node.right) && isKind(node.left));
      if (equality && pair) report(node, `compares a node's type (${node.getText()})`);
    } else if (ts.isSwitchStatement(node) && isTypeAccess(node.expression)) {
      for (const clause of node.caseBlock.clauses) {
        if (ts.isCaseClause(clause) && isKind(clause.expression))
          report(clause, `switches on a node kind (${clause.expression.getText()})`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return found;
}

function relativeViolation(from: Layer, target: string, typeOnly: boolean): string | undefined {
  const to = layerOf(target);
  if (!to) return 'target sits on no floor';
  if (to.module === from.module) return undefined;
  const describe = (layer: Layer) => `floor ${layer.floor} (${layer.module})`;
  // Routes receive the Deps object; naming its type couples nothing at run time.
  const apiNamesDepsType = from.kind === 'api' && to.module === 'deps.ts' && typeOnly;
  if (to.floor >= from.floor && !apiNamesDepsType) {
    return `${describe(from)} may only import lower floors, not ${describe(to)}`;
  }
  if (from.kind === 'api' && to.kind === 'adapter' && !typeOnly) {
    return `api/ may not load an adapter (${to.module}); only deps.ts and main.ts wire concrete classes (use \`import type\`)`;
  }
  return undefined;
}

function packageViolation(file: string, layer: Layer, specifier: string): string | undefined {
  if (specifier.startsWith('node:')) return undefined;
  const name = packageName(specifier);
  if (layer.kind === 'ground' && file.startsWith('src/domain/') && name !== 'zod') {
    return 'domain/ may import only zod and node: builtins';
  }
  if (
    (layer.kind === 'engine' || layer.kind === 'policy') &&
    (INFRASTRUCTURE_PACKAGES.includes(name) || name.startsWith('@fastify/'))
  ) {
    return `${layer.module}/ must stay free of infrastructure packages (${name})`;
  }
  if (name === '@anthropic-ai/sdk' && file !== 'src/llm/anthropic.ts') {
    return 'only src/llm/anthropic.ts may import the Anthropic SDK';
  }
  if (name === 'prom-client' && !file.startsWith('src/telemetry/')) {
    return 'only src/telemetry/ may import prom-client';
  }
  if (name === 'better-sqlite3' && !file.startsWith('src/store/sqlite/')) {
    return 'only src/store/sqlite/ may import better-sqlite3';
  }
  if (name === 'pg' && !file.startsWith('src/store/postgres/')) {
    return 'only src/store/postgres/ may import pg';
  }
  return undefined;
}

/** Each elementary cycle found by a depth-first search, once, as a closed path of files. */
function findCycles(edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const cycles: string[][] = [];
  const seenCycles = new Set<string>();
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];

  const visit = (file: string): void => {
    state.set(file, 'visiting');
    stack.push(file);
    for (const next of [...(edges.get(file) ?? [])].sort()) {
      const nextState = state.get(next);
      if (nextState === 'visiting') {
        const cycle = stack.slice(stack.indexOf(next));
        const key = [...cycle].sort().join('|');
        if (!seenCycles.has(key)) {
          seenCycles.add(key);
          cycles.push([...cycle, next]);
        }
      } else if (nextState === undefined) {
        visit(next);
      }
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of [...edges.keys()].sort()) if (!state.has(file)) visit(file);
  return cycles;
}

function readSourceTree(root: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.ts')) files.set(rel, readFileSync(path.join(root, rel), 'utf8'));
    }
  };
  walk('src');
  return files;
}

describe('architecture (docs/design.md#architecture-and-floors)', () => {
  it('the checker flags what it must, on an in-memory fixture', () => {
    const fixture = new Map<string, string>([
      ['src/domain/ids.ts', `import { run } from '../engine/run/run.js';\nimport Fastify from 'fastify';`],
      ['src/engine/run/run.ts', `import { plan } from '../submission/plan.js';\nimport type { Logger } from 'pino';`],
      [
        'src/engine/submission/plan.ts',
        `export { run } from '../run/run.js';\nconst lazy = () => import('../../domain/ids.js');`,
      ],
      ['src/llm/simulated.ts', `import { db } from '../store/db.js';\nimport Anthropic from '@anthropic-ai/sdk';`],
      [
        'src/store/db.ts',
        `import Database from 'better-sqlite3';\n// import { x } from '../api/nope.js';\nimport pg from 'pg';`,
      ],
      ['src/store/postgres/pool.ts', `import pg from 'pg';`],
      ['src/store/sqlite/db.ts', `import Database from 'better-sqlite3';`],
      [
        'src/api/routes.ts',
        `import { db } from '../store/db.js';\nimport type { Db } from '../store/db.js';\nimport type { Deps } from '../deps.js';`,
      ],
      ['src/deps.ts', `import { db } from './store/db.js';\nimport { buildApp } from './app.js';`],
      ['src/misc/util.ts', ''],
      ['src/engine/node-a.ts', `import type { B } from './node-b.js';`],
      ['src/engine/node-b.ts', `import type { A } from './node-a.js';\nif (node.type === 'prompt') run();`],
      [
        'src/engine/nodes/prompt.ts',
        `import type { Run } from '../run/run.js';\nswitch (n.type) { case 'prompt': break; }`,
      ],
      ['src/engine/nodes/review.ts', `import type { X } from '../executor.js';\nimport { y } from '../errors.js';`],
      ['src/engine/errors.ts', ''],
      ['src/engine/executor.ts', ''],
      [
        'src/api/views.ts',
        `import type { Executor } from '../engine/executor.js';\nimport { z } from '../engine/errors.js';`,
      ],
    ]);
    const { violations, importsScanned } = checkArchitecture(fixture);
    expect(importsScanned).toBe(24);
    expect(violations.sort()).toEqual(
      [
        `src/domain/ids.ts imports '../engine/run/run.js' (src/engine/run/run.ts): floor 1 (domain) may only import lower floors, not floor 3 (engine)`,
        `src/domain/ids.ts imports 'fastify': domain/ may import only zod and node: builtins`,
        `src/engine/run/run.ts imports 'pino': engine/ must stay free of infrastructure packages (pino)`,
        `src/llm/simulated.ts imports '../store/db.js' (src/store/db.ts): floor 2 (llm) may only import lower floors, not floor 2 (store)`,
        `src/llm/simulated.ts imports '@anthropic-ai/sdk': only src/llm/anthropic.ts may import the Anthropic SDK`,
        `src/store/db.ts imports 'pg': only src/store/postgres/ may import pg`,
        `src/store/db.ts imports 'better-sqlite3': only src/store/sqlite/ may import better-sqlite3`,
        `src/api/routes.ts imports '../store/db.js' (src/store/db.ts): api/ may not load an adapter (store); only deps.ts and main.ts wire concrete classes (use \`import type\`)`,
        `src/deps.ts imports './app.js' (src/app.ts): floor 4 (deps.ts) may only import lower floors, not floor 5 (app.ts)`,
        'src/misc/util.ts sits on no floor of docs/design.md#architecture-and-floors: place its folder in test/unit/architecture.test.ts',
        'import cycle: src/domain/ids.ts → src/engine/run/run.ts → src/engine/submission/plan.ts → src/domain/ids.ts',
        'import cycle: src/engine/run/run.ts → src/engine/submission/plan.ts → src/engine/run/run.ts',
        'import cycle: src/engine/node-a.ts → src/engine/node-b.ts → src/engine/node-a.ts',
        `src/engine/submission/plan.ts imports '../run/run.js': only src/engine/executor.ts may import the Run; node handlers receive a NodeContext`,
        `src/engine/submission/plan.ts imports '../run/run.js': engine/submission/ never imports engine/run/`,
        `src/domain/ids.ts imports '../engine/run/run.js': only src/engine/executor.ts may import the Run; node handlers receive a NodeContext`,
        `src/engine/nodes/prompt.ts imports '../run/run.js': only src/engine/executor.ts may import the Run; node handlers receive a NodeContext`,
        `src/engine/nodes/prompt.ts imports '../run/run.js': engine/nodes/ may import of the engine only node-context.ts, errors.ts and nodes/`,
        `src/engine/nodes/review.ts imports '../executor.js': engine/nodes/ may import of the engine only node-context.ts, errors.ts and nodes/`,
        `src/api/views.ts imports '../engine/errors.js': api/ takes from engine/ only the executor's types`,
        `src/engine/node-b.ts:2 compares a node's type (node.type === 'prompt'): node kinds are handled in the handler table (src/engine/nodes/table.ts)`,
      ].sort(),
    );
  });

  it('src/ respects the floors, the package boundaries, and has no import cycle', () => {
    const files = readSourceTree(process.cwd());
    const { violations, filesScanned, importsScanned } = checkArchitecture(files);
    // Guards against a scan that silently parses nothing (wrong cwd, broken walker).
    expect(filesScanned).toBeGreaterThan(10);
    expect(importsScanned).toBeGreaterThan(filesScanned);
    expect(violations).toEqual([]);
  });
});
