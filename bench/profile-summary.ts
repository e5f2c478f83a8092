/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`): the top functions by self time with
 * file:line, the same functions' inclusive (self + callees) time, and self time per file/package.
 * It exists so the next engineer can go from "the benchmark is slow" to "this function" in one step:
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/executor.ts
 *   npx tsx bench/profile-summary.ts /tmp/prof            # the largest profile in the directory
 *   npx tsx bench/profile-summary.ts file.cpuprofile --top 40
 *
 * V8 reports positions in the code it ran, which for TypeScript is tsx's output (esbuild with
 * minifyWhitespace: a whole file in a few lines). So project .ts files are transformed again here
 * with tsx's esbuild options and positions mapped back through the source map to the real
 * `file.ts:line`; if that is impossible (esbuild missing), the generated line is shown with a `~`.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

interface Totals {
  self: number;
  inclusive: number;
}

function pickProfile(path: string): string {
  if (!statSync(path).isDirectory()) return path;
  const files = readdirSync(path)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => join(path, f))
    .sort((a, b) => statSync(b).size - statSync(a).size);
  const first = files[0];
  if (first === undefined) throw new Error(`no .cpuprofile in ${path}`);
  return first;
}

function shortUrl(url: string): string {
  if (url === '') return '';
  const path = url.startsWith('file://') ? new URL(url).pathname : url;
  const modules = path.lastIndexOf('/node_modules/');
  if (modules >= 0) return path.slice(modules + '/node_modules/'.length);
  return path.startsWith('/') ? relative(process.cwd(), path) : path;
}

type Transform = (code: string, options: Record<string, unknown>) => { map: string };
let transform: Transform | null | undefined;
const sourceMaps = new Map<string, SourceMap | null>();

/** tsx's transform (node_modules/tsx: target, sourcemap, minifyWhitespace, keepNames, the tsconfig). */
async function loadTransform(): Promise<void> {
  try {
    const esbuild = (await import('esbuild')) as { transformSync: Transform };
    transform = esbuild.transformSync;
  } catch {
    transform = null;
  }
}

function sourceMapFor(url: string): SourceMap | null {
  let map = sourceMaps.get(url);
  if (map !== undefined) return map;
  map = null;
  const path = url.startsWith('file://') ? fileURLToPath(url) : '';
  if (transform && /\.[cm]?tsx?$/.test(path) && !path.includes('/node_modules/') && existsSync(path)) {
    try {
      const tsconfig = existsSync('tsconfig.json') ? (JSON.parse(readFileSync('tsconfig.json', 'utf8')) as object) : {};
      const result = transform(readFileSync(path, 'utf8'), {
        target: `node${process.versions.node}`,
        loader: path.endsWith('x') ? 'tsx' : 'ts',
        format: 'esm',
        sourcemap: true,
        minifyWhitespace: true,
        keepNames: true,
        sourcefile: path,
        tsconfigRaw: tsconfig,
      });
      map = new SourceMap(JSON.parse(result.map) as ConstructorParameters<typeof SourceMap>[0]);
    } catch {
      map = null;
    }
  }
  sourceMaps.set(url, map);
  return map;
}

/** 1-based source line of a frame, `~n` when only the generated line is known. */
function lineOf(frame: CallFrame): string {
  const map = sourceMapFor(frame.url);
  if (map === null) return /\.[cm]?tsx?$/.test(frame.url) ? `~${frame.lineNumber + 1}` : String(frame.lineNumber + 1);
  const entry = map.findEntry(frame.lineNumber, frame.columnNumber) as { originalLine?: number };
  return entry.originalLine === undefined ? `~${frame.lineNumber + 1}` : String(entry.originalLine + 1);
}

/** A function's identity across the profile tree (one function is many nodes, one per call path). */
function functionKey(frame: CallFrame): string {
  const name = frame.functionName || '(anonymous)';
  const where = shortUrl(frame.url);
  return where === '' ? name : `${name}  ${where}:${lineOf(frame)}`;
}

/** The file or package a frame belongs to: `zod`, `better-sqlite3`, `src/engine/run/run.ts`, `(native)`. */
function fileKey(frame: CallFrame): string {
  const where = shortUrl(frame.url);
  if (where === '') return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  if (frame.url.includes('/node_modules/')) {
    const parts = where.split('/');
    return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? where);
  }
  if (where.startsWith('node:')) return 'node:*';
  return where;
}

async function main(): Promise<void> {
  await loadTransform();
  const args = process.argv.slice(2);
  const topIndex = args.indexOf('--top');
  const top = topIndex >= 0 ? Number(args[topIndex + 1]) : 25;
  const target = args.find((a, i) => !a.startsWith('--') && i !== topIndex + 1) ?? '/tmp/prof';
  const file = pickProfile(target);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;

  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }

  const functions = new Map<string, Totals>();
  const files = new Map<string, number>();
  const totalsFor = (key: string): Totals => {
    let totals = functions.get(key);
    if (totals === undefined) {
      totals = { self: 0, inclusive: 0 };
      functions.set(key, totals);
    }
    return totals;
  };

  let totalUs = 0;
  const onStack = new Set<string>();
  profile.samples.forEach((sampleId, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    totalUs += delta;
    const leaf = byId.get(sampleId);
    if (leaf === undefined) return;
    totalsFor(functionKey(leaf.callFrame)).self += delta;
    const fk = fileKey(leaf.callFrame);
    files.set(fk, (files.get(fk) ?? 0) + delta);
    // Inclusive: every distinct function on the sampled stack (recursion counted once).
    onStack.clear();
    for (let id: number | undefined = sampleId; id !== undefined; id = parent.get(id)) {
      const node = byId.get(id);
      if (node === undefined) break;
      const key = functionKey(node.callFrame);
      if (onStack.has(key)) continue;
      onStack.add(key);
      totalsFor(key).inclusive += delta;
    }
  });

  const ms = (us: number) => (us / 1000).toFixed(1).padStart(9);
  const pct = (us: number) => `${((100 * us) / totalUs).toFixed(1).padStart(5)}%`;

  console.log(`${file}: ${(totalUs / 1000).toFixed(0)} ms sampled, ${profile.samples.length} samples\n`);
  console.log(`Top ${top} functions by self time (self ms, self %, inclusive ms, inclusive %):`);
  const ranked = [...functions.entries()].sort((a, b) => b[1].self - a[1].self).slice(0, top);
  for (const [key, t] of ranked)
    console.log(`${ms(t.self)} ${pct(t.self)} ${ms(t.inclusive)} ${pct(t.inclusive)}  ${key}`);

  console.log('\nSelf time by file / package:');
  const rankedFiles = [...files.entries()].sort((a, b) => b[1] - a[1]).slice(0, 20);
  for (const [key, us] of rankedFiles) console.log(`${ms(us)} ${pct(us)}  ${key}`);

  console.log(`\nTop ${top} project functions (src/) by inclusive time:`);
  const project = [...functions.entries()]
    .filter(([key]) => key.includes(' src/'))
    .sort((a, b) => b[1].inclusive - a[1].inclusive)
    .slice(0, top);
  for (const [key, t] of project)
    console.log(`${ms(t.self)} ${pct(t.self)} ${ms(t.inclusive)} ${pct(t.inclusive)}  ${key}`);
}

await main();
