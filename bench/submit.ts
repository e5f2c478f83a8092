/**
 * Submit path (docs/design.md#tests-and-checks goal: ≥ 10 000 `POST /v1/workflows` per second at 50 connections, p99 ≤
 * 20 ms, the rows durably committed before the 202).
 *
 * What it measures: autocannon (50 connections, BENCH_SECONDS, default 10 s, after a short warm-up)
 * against the real app (createDeps + buildApp, temp-file SQLite DB, LOG_LEVEL=silent) listening on
 * 127.0.0.1:0, posting a small valid definition (one `prompt` node on `sim/haiku`):
 *   - `rps`/`p99_ms`: with the executor started, so the submitted workflows also run in this
 *     process, as in production;
 *   - `rps_submit_only`/`p99_ms_submit_only`: executor not started (submissions only validate and
 *     persist), which isolates the HTTP + validation + group-commit path.
 * Reference in the same run: a bare fastify 5 + fastify-type-provider-zod route with a comparable zod
 * body and response schema and no I/O; the ratio shows what baton adds over the framework floor.
 *
 * autocannon runs in its own worker thread (`workers: 1`) so the load generator does not share the
 * server's event loop; the server side gets one core, as the goal states. Every response must be
 * 202 (200 for the reference): any error or other status fails the benchmark (exit 1).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import fastify, { type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/deps.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP_SECONDS = Math.max(1, Math.min(3, Math.round(SECONDS / 5)));
const CONNECTIONS = 50;

const body = JSON.stringify({
  name: 'bench-submit',
  input: { n: 1 },
  agents: { writer: { model: 'sim/haiku' } },
  root: { type: 'prompt', name: 'only', agent: 'writer', user: 'Say hello to {{input.n}}.' },
});

interface Measured {
  rps: number;
  p99: number;
  errors: number;
  non2xx: number;
  statuses: Record<string, number>;
}

async function load(url: string, seconds: number): Promise<Measured> {
  const result = await autocannon({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections: CONNECTIONS,
    duration: seconds,
    workers: Number(process.env.BENCH_AUTOCANNON_WORKERS ?? 1),
  });
  const statuses: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statuses[code] = count;
  return {
    rps: Math.round(result.requests.average),
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    statuses,
  };
}

/** Warm-up (discarded), then the measured run. */
async function measure(app: FastifyInstance, expectedStatus: number): Promise<Measured> {
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `${address}/v1/workflows`;
  const probe = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const probeBody = (await probe.json()) as { id?: unknown };
  if (probe.status !== expectedStatus || typeof probeBody.id !== 'string') {
    throw new Error(
      `probe answered ${probe.status} ${JSON.stringify(probeBody)}; expected ${expectedStatus} with an id`,
    );
  }
  await load(url, WARMUP_SECONDS);
  const measured = await load(url, SECONDS);
  const unexpected = Object.keys(measured.statuses).filter((code) => code !== String(expectedStatus));
  if (unexpected.length > 0) measured.non2xx += unexpected.reduce((n, code) => n + (measured.statuses[code] ?? 0), 0);
  return measured;
}

async function baton(startExecutor: boolean): Promise<Measured> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-bench-submit-'));
  const deps = await createDeps(
    loadConfig({ DATABASE_PATH: join(dir, 'bench.db'), LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '0' }),
  );
  const app = await buildApp(deps);
  try {
    await app.ready();
    if (startExecutor) await deps.executor.start();
    const measured = await measure(app, 202);
    // The 202s were committed: a page of the tenant's workflows is there to read.
    const page = await deps.store.list('default', {}, null, 1);
    if (page.items.length === 0) throw new Error('no workflow persisted');
    return measured;
  } finally {
    await app.close();
    await deps.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// ── reference: fastify + zod type provider, a comparable body schema, no I/O ──

const Name = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9_-](?:[A-Za-z0-9 _-]*[A-Za-z0-9_-])?$/);
const Model = z
  .string()
  .min(1)
  .max(200)
  .regex(/^(?:haiku|sonnet|opus|[a-z][a-z0-9-]*\/[A-Za-z0-9._:/-]+)$/);
const Agent = z.strictObject({
  model: Model.optional(),
  system: z.string().max(100_000).optional(),
  maxTokens: z.int().min(1).max(64_000).optional(),
  temperature: z.number().min(0).max(2).optional(),
});
const Prompt = z.strictObject({
  type: z.literal('prompt'),
  name: Name,
  agent: Name,
  user: z.string().min(1).max(100_000),
  data: z.record(z.string(), z.unknown()).optional(),
  maxTurns: z.int().min(1).max(50).optional(),
});
const Sequence = z.strictObject({ type: z.literal('sequence'), name: Name, steps: z.array(Prompt).min(1).max(200) });
const ReferenceBody = z.strictObject({
  name: Name,
  input: z.unknown().optional(),
  agents: z.record(Name, Agent).default({}),
  root: z.discriminatedUnion('type', [Prompt, Sequence]),
  correlationId: z.string().min(1).max(200).optional(),
});
const ReferenceReply = z.object({
  id: z.string(),
  status: z.enum(['idle', 'running', 'completed', 'failed', 'cancelled']),
  traceId: z.string(),
  links: z.object({ self: z.string(), tree: z.string(), events: z.string(), cancel: z.string() }),
});

async function reference(): Promise<Measured> {
  const app = fastify({ logger: false });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  let counter = 0;
  app
    .withTypeProvider<ZodTypeProvider>()
    .post(
      '/v1/workflows',
      { schema: { body: ReferenceBody, response: { 202: ReferenceReply } } },
      async (request, reply) => {
        const id = `wf_${(++counter).toString(36)}_${request.body.name.length}`;
        return reply
          .code(202)
          .header('location', `/v1/workflows/${id}`)
          .send({
            id,
            status: 'idle',
            traceId: id,
            links: {
              self: `/v1/workflows/${id}`,
              tree: `/v1/workflows/${id}/tree`,
              events: `/v1/workflows/${id}/events`,
              cancel: `/v1/workflows/${id}/cancel`,
            },
          });
      },
    );
  try {
    return await measure(app, 202);
  } finally {
    await app.close();
  }
}

async function main(): Promise<void> {
  const ref = await reference();
  const submitOnly = await baton(false);
  const full = await baton(true);
  const line = {
    bench: 'submit',
    goal_rps: 10_000,
    goal_p99_ms: 20,
    rps: full.rps,
    p99_ms: full.p99,
    rps_submit_only: submitOnly.rps,
    p99_ms_submit_only: submitOnly.p99,
    reference_bare_fastify_rps: ref.rps,
    reference_p99_ms: ref.p99,
    errors: full.errors + submitOnly.errors + ref.errors,
    non2xx: full.non2xx + submitOnly.non2xx + ref.non2xx,
    statuses: { full: full.statuses, submit_only: submitOnly.statuses, reference: ref.statuses },
    connections: CONNECTIONS,
    seconds: SECONDS,
    node: process.version,
  };
  console.log(JSON.stringify(line));
  if (line.errors > 0 || line.non2xx > 0) {
    console.error(`submit bench: ${line.errors} errors and ${line.non2xx} responses other than 202`);
    process.exit(1);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
