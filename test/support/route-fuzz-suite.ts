import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import type { RouteResult } from './route-fuzz.js';
import type { FuzzAssignment, FuzzMessage } from './route-fuzz-worker.js';
import { buildInventoriedApp, type RouteEntry } from './route-inventory.js';
import { reportFigures } from './scale.js';

/**
 * Registers the route fuzz of a test file: one test per selected route of the app's inventory
 * (enumerated at collection, so a route added later is fuzzed without anyone editing a list).
 * The fuzz itself runs in worker threads, each with its own app: vitest runs one test file at a
 * time on 2 cores, and 10 000 requests per route are CPU work that would leave the second idle.
 */
export interface RouteFuzzSuite {
  /** The name its figures print under. */
  suite: string;
  /** Which of the app's routes this file fuzzes. */
  select: (route: RouteEntry) => boolean;
  runs: number;
  /** Runs for a route whose only input is the query string (no declared parameter, no body). */
  queryOnlyRuns: number;
}

interface Operation {
  parameters?: unknown[];
}

const keyOf = (route: RouteEntry) => `${route.method} ${route.url}`;

/** Routes that take no parameter and no body: served files, documents, probes, fixed lists. */
function takesOnlyAQuery(route: RouteEntry, paths: Record<string, Record<string, Operation>>): boolean {
  if (route.method !== 'GET' || /[:*]/.test(route.url)) return false;
  const operation = paths[route.url]?.get;
  return (operation?.parameters ?? []).length === 0;
}

interface Deferred {
  promise: Promise<RouteResult>;
  resolve(result: RouteResult): void;
  reject(err: Error): void;
}

function deferred(): Deferred {
  let resolve!: (result: RouteResult) => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<RouteResult>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Awaited by its test later; a worker that dies early must not be an unhandled rejection meanwhile.
  promise.catch(() => {});
  return { promise, resolve, reject };
}

/** A worker thread running route-fuzz-worker.ts under tsx (vitest's transform does not reach workers). */
function startWorker(assignment: FuzzAssignment): Worker {
  const url = new URL('./route-fuzz-worker.ts', import.meta.url).href;
  const code = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(url)}); })`;
  return new Worker(code, { eval: true, workerData: assignment });
}

export async function describeRouteFuzz(options: RouteFuzzSuite): Promise<void> {
  const inventory = await buildInventoriedApp();
  const paths = (inventory.app.swagger() as unknown as { paths: Record<string, Record<string, Operation>> }).paths;
  const routes = inventory.routes.filter(options.select).map((route) => ({
    route,
    runs: takesOnlyAQuery(route, paths) ? options.queryOnlyRuns : options.runs,
  }));
  await inventory.close();

  // Round-robin in test order, so each thread's next result is the one a test waits for next.
  // Two threads for two cores (FUZZ_THREADS=1 runs them all in one app, in inventory order).
  const wanted = Number(process.env.FUZZ_THREADS ?? 2);
  const threads = Math.max(1, Math.min(wanted, availableParallelism(), routes.length));
  const results = new Map(routes.map(({ route }) => [keyOf(route), deferred()]));
  const workers: Worker[] = [];
  for (let n = 0; n < threads; n++) {
    const mine = routes.filter((_, i) => i % threads === n).map(({ route, runs }) => ({ key: keyOf(route), runs }));
    const worker = startWorker({ routes: mine });
    const failAll = (why: string) => {
      for (const { key } of mine) results.get(key)?.reject(new Error(why));
    };
    worker.on('message', (message: FuzzMessage) => {
      if ('startupFailure' in message) failAll(`the fuzz thread failed: ${message.startupFailure}`);
      else results.get(message.key)?.resolve(message.result);
    });
    worker.on('error', (err) => failAll(`the fuzz thread crashed: ${err.stack ?? err.message}`));
    worker.on('exit', (code) => failAll(`the fuzz thread exited (${code}) before its routes were done`));
    workers.push(worker);
  }
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.terminate()));
  });

  describe(options.suite, () => {
    it('the inventory has routes to fuzz', () => {
      expect(routes.length).toBeGreaterThan(0);
    });
    for (const { route, runs } of routes) {
      const name = `${keyOf(route)}: ${runs} fuzzed requests, no 5xx, JSON errors, no stack traces`;
      it(name, { timeout: 900_000 }, async () => {
        const { figures, failure } = await (results.get(keyOf(route)) as Deferred).promise;
        reportFigures(options.suite, { ...figures });
        if (failure !== undefined) throw new Error(failure);
        expect(figures['5xx']).toBe(0);
        expect(figures.runs).toBe(runs);
      });
    }
  });
}
