/**
 * Cache hit path (docs/design.md#tests-and-checks goal: key over a 2 KB request + lookup ≤ 15 µs).
 *
 * What it measures, over 64 variants of a realistic ~2 KB effective request (system prompt, a user
 * message with data, a tool turn, two tool definitions, stop, temperature, schema hash), each a
 * fresh object graph as the engine would build per call:
 * - key_us_2kb: cacheKey() = canonical JSON + SHA-256;
 * - hit_path_us_2kb: cacheKey() + an awaited memory-tier get() that hits;
 * - hit_path_persist_us_2kb: the same with the SQLite tier attached, including the group-committed
 *   hit counter (amortised: a commit every 50 hits, as the event loop would give it);
 * - the references, measured in this same run over the same requests: a naive recursive
 *   sorted-key stringify (Object.keys().sort(), map/join, WeakSet cycle guard) and plain
 *   JSON.stringify (not canonical: shown as the floor of serialising at all).
 *
 * Env: BENCH_CACHE_ITERATIONS (default 20000 per round), 7 rounds, median reported.
 */
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { cacheKey, type EffectiveRequest, schemaHash } from '../src/cache/cache-key.js';
import { createResponseCache } from '../src/cache/response-cache.js';
import type { CachedResponse } from '../src/domain/cache.js';
import { canonicalJson } from '../src/domain/canonical-json.js';
import { systemClock } from '../src/inproc/clock.js';
import { createSqliteCacheStore } from '../src/store/sqlite/cache.repo.js';
import { openDatabase } from '../src/store/sqlite/db.js';
import { createGroupCommitter } from '../src/store/sqlite/group-commit.js';

const ITERATIONS = Number(process.env.BENCH_CACHE_ITERATIONS ?? 20_000);
const ROUNDS = 7;
const VARIANTS = 64;

const responseFormat = {
  type: 'object',
  properties: {
    verdict: { type: 'string', enum: ['approve', 'reject', 'comment'] },
    findings: { type: 'array', items: { type: 'object', properties: { line: { type: 'integer' } } } },
  },
  required: ['verdict', 'findings'],
};

function request(i: number): EffectiveRequest {
  return {
    tenant: 'acme',
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    system:
      'You are a meticulous code reviewer. Review the change for correctness, security and clarity. ' +
      'Answer with a verdict and concrete findings; cite line numbers; never invent code that is not shown. ' +
      'Prefer small, actionable suggestions over rewrites, and flag anything that weakens tests.',
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: `Review pull request #${1000 + i} of the payments service.` },
          {
            type: 'text',
            text: JSON.stringify({
              title: 'Retry failed webhook deliveries with backoff',
              author: 'dev-42',
              files: ['src/webhooks/deliver.ts', 'src/webhooks/retry.ts', 'test/webhooks/retry.test.ts'],
              diffStats: { additions: 120, deletions: 14 },
              labels: ['payments', 'reliability'],
            }),
          },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me look at the retry policy first.' },
          { type: 'tool_use', id: `toolu_${i}`, name: 'read_file', input: { path: 'src/webhooks/retry.ts' } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: `toolu_${i}`,
            content:
              'export function backoff(attempt: number): number {\n  return Math.min(30_000, 2 ** attempt * 100);\n}\n' +
              'export const MAX_ATTEMPTS = 8;\n' +
              'export function shouldRetry(status: number, attempt: number): boolean {\n' +
              '  return attempt < MAX_ATTEMPTS && (status === 429 || status >= 500);\n}\n' +
              'export function nextDelivery(now: number, attempt: number): number {\n' +
              '  return now + backoff(attempt);\n}\n',
          },
        ],
      },
    ],
    temperature: 0.2,
    maxTokens: 2048,
    stop: ['</review>'],
    tools: [
      {
        name: 'search_code',
        description: 'Full-text search over the repository; returns matching lines with file and line number.',
        input_schema: {
          type: 'object',
          properties: { query: { type: 'string', minLength: 1 }, limit: { type: 'integer', maximum: 50 } },
          required: ['query'],
        },
      },
      {
        name: 'read_file',
        description: 'Reads one file of the repository at the reviewed commit.',
        input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      },
    ],
    schemaHash: schemaHash(responseFormat),
  };
}

/** The naive reference: what docs/design.md#tests-and-checks calls sorted-key recursion. */
function naiveSortedStringify(value: unknown): string {
  const seen = new WeakSet<object>();
  const stringify = (val: unknown): string => {
    if (val === null || typeof val !== 'object') return JSON.stringify(val) ?? 'null';
    if (seen.has(val)) throw new TypeError('Converting circular structure to JSON');
    seen.add(val);
    const out = Array.isArray(val)
      ? `[${val.map(stringify).join(',')}]`
      : `{${Object.keys(val)
          .sort()
          .filter((k) => (val as Record<string, unknown>)[k] !== undefined)
          .map((k) => `${JSON.stringify(k)}:${stringify((val as Record<string, unknown>)[k])}`)
          .join(',')}}`;
    seen.delete(val);
    return out;
  };
  return stringify(value);
}

/** Fresh object graphs per call, like the engine's; built outside the timed loops. */
const requests = Array.from({ length: VARIANTS }, (_, i) => structuredClone(request(i)));
const bytes = Buffer.byteLength(canonicalJson({ v: 1, ...requests[0] }));
let sink = 0;

function medianUs(run: (i: number) => void): number {
  const perCall: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = performance.now();
    for (let i = 0; i < ITERATIONS; i++) run(i);
    perCall.push(((performance.now() - start) * 1000) / ITERATIONS);
  }
  perCall.sort((a, b) => a - b);
  return perCall[Math.floor(ROUNDS / 2)] as number;
}

async function medianUsAsync(run: (i: number) => Promise<void>, yieldEvery: number): Promise<number> {
  const perCall: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = performance.now();
    for (let i = 0; i < ITERATIONS; i++) {
      await run(i);
      if (i % yieldEvery === yieldEvery - 1) await new Promise((resolve) => setImmediate(resolve));
    }
    perCall.push(((performance.now() - start) * 1000) / ITERATIONS);
  }
  perCall.sort((a, b) => a - b);
  return perCall[Math.floor(ROUNDS / 2)] as number;
}

const at = (i: number): EffectiveRequest => requests[i % VARIANTS] as EffectiveRequest;
const sha = (text: string): string => createHash('sha256').update(text).digest('hex');

const cached: CachedResponse = {
  response: {
    content: [{ type: 'text', text: '{"verdict":"approve","findings":[]}' }],
    stopReason: 'end_turn',
    usage: { inputTokens: 600, outputTokens: 20 },
    model: 'claude-sonnet-4-5',
    requestId: null,
  },
  modelId: 'anthropic/claude-sonnet-4-5',
  costUsd: 0.0021,
  createdAt: Date.now(),
};

async function main(): Promise<void> {
  const options = { clock: systemClock, maxItems: 1000, maxBytes: 50 * 1024 * 1024, ttlMs: 3_600_000 };
  const memory = createResponseCache(options);
  const db = openDatabase(':memory:', { synchronous: 'NORMAL' });
  const persisted = createResponseCache({ ...options, store: createSqliteCacheStore(db, createGroupCommitter(db)) });
  for (let i = 0; i < VARIANTS; i++) {
    await memory.set('acme', cacheKey('reviewer', at(i)), cached);
    await persisted.set('acme', cacheKey('reviewer', at(i)), cached);
  }

  // Warm-up of every path before measuring.
  for (let i = 0; i < ITERATIONS; i++) {
    sink += cacheKey('reviewer', at(i)).length + naiveSortedStringify({ v: 1, ...at(i) }).length;
    sink += JSON.stringify({ v: 1, ...at(i) }).length;
  }

  const keyUs = medianUs((i) => {
    sink += cacheKey('reviewer', at(i)).length;
  });
  const canonicalUs = medianUs((i) => {
    sink += canonicalJson({ v: 1, ...at(i) }).length;
  });
  const naiveUs = medianUs((i) => {
    sink += naiveSortedStringify({ v: 1, ...at(i) }).length;
  });
  const naiveKeyUs = medianUs((i) => {
    sink += sha(naiveSortedStringify({ v: 1, ...at(i) })).length;
  });
  const jsonUs = medianUs((i) => {
    sink += JSON.stringify({ v: 1, ...at(i) }).length;
  });
  const hitUs = await medianUsAsync(async (i) => {
    const hit = await memory.get('acme', cacheKey('reviewer', at(i)));
    if (hit === undefined) throw new Error('expected a hit');
  }, ITERATIONS);
  const hitPersistUs = await medianUsAsync(async (i) => {
    const hit = await persisted.get('acme', cacheKey('reviewer', at(i)));
    if (hit === undefined) throw new Error('expected a hit');
  }, 50);
  db.close();

  const round = (us: number) => Math.round(us * 100) / 100;
  console.log(
    JSON.stringify({
      bench: 'cache',
      goal_us_hit_path: 15,
      request_bytes: bytes,
      key_us_2kb: round(keyUs),
      hit_path_us_2kb: round(hitUs),
      hit_path_persist_us_2kb: round(hitPersistUs),
      canonical_json_us_2kb: round(canonicalUs),
      reference_naive_sorted_stringify_us_2kb: round(naiveUs),
      reference_naive_key_us_2kb: round(naiveKeyUs),
      reference_json_stringify_us_2kb: round(jsonUs),
      sink: sink > 0,
    }),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
