import fc from 'fast-check';
import { type FuzzApp, refreshFixtures } from './fuzz-app.js';
import { checkAnswer, checkPrototypes, snapshotPrototypes } from './fuzz-checks.js';
import { requestArbitrary } from './fuzz-requests.js';
import type { RouteEntry } from './route-inventory.js';

/**
 * The route fuzz: every route the app registers (its onRoute inventory, not a list kept
 * here), each request derived from the route's OpenAPI operation (fuzz-requests.ts) and sent
 * in-process with app.inject. The properties every answer keeps (fuzz-checks.ts): no 5xx, every 4xx
 * the JSON error shape with a code of the table, no stack trace or source path, no error logged,
 * Object.prototype untouched, parameters valid by the route's schema never refused.
 */

export interface RouteFigures {
  route: string;
  seed: number;
  runs: number;
  '2xx': number;
  '3xx': number;
  '4xx': number;
  '5xx': number;
  statuses: Record<string, number>;
  /** 2xx answers by request kind: proof the valid and near-valid requests reached the handler. */
  okByKind: Record<string, number>;
  ms: number;
  /** Workflows of the app still running afterwards: accepted ones parked on the manual clock. */
  running: number;
}

/** A seed per route from the suite's base seed (FUZZ_SEED overrides it), so each route explores its own cases. */
export function seedFor(route: RouteEntry): number {
  let hash = Number(process.env.FUZZ_SEED ?? 110_411) >>> 0;
  for (const c of `${route.method} ${route.url}`) hash = Math.imul(hash ^ c.charCodeAt(0), 16_777_619) >>> 0;
  return hash | 0;
}

export interface RouteResult {
  figures: RouteFigures;
  /** fast-check's report (seed, counterexample, cause) when a property failed. */
  failure?: string;
}

/**
 * Fuzzes one route with `numRuns` requests under fc.assert (seeded; a failure is shrunk and replays
 * with the printed seed) and returns what it saw. Each run checks the answer, the error log and
 * Object.prototype; the other built-in prototypes are checked at the end.
 */
export async function fuzzRoute(fuzz: FuzzApp, route: RouteEntry, numRuns: number): Promise<RouteResult> {
  const seed = seedFor(route);
  fuzz.known = await refreshFixtures(fuzz);
  const figures: RouteFigures = {
    route: `${route.method} ${route.url}`,
    seed,
    runs: 0,
    '2xx': 0,
    '3xx': 0,
    '4xx': 0,
    '5xx': 0,
    statuses: {},
    okByKind: {},
    ms: 0,
    running: 0,
  };
  const allPrototypes = snapshotPrototypes();
  const objectPrototype = snapshotPrototypes([Object.prototype]);
  const started = performance.now();
  try {
    await fc.assert(
      fc.asyncProperty(requestArbitrary(fuzz, route), async (request) => {
        const logged = fuzz.errorLines.length;
        const res = await fuzz.app.inject({
          method: request.method as 'GET',
          url: request.url,
          headers: request.headers,
          ...(request.payload === undefined ? {} : { payload: request.payload }),
        });
        figures.runs++;
        const klass = `${Math.floor(res.statusCode / 100)}xx` as '2xx';
        figures[klass] = (figures[klass] ?? 0) + 1;
        figures.statuses[res.statusCode] = (figures.statuses[res.statusCode] ?? 0) + 1;
        if (res.statusCode < 300) figures.okByKind[request.kind] = (figures.okByKind[request.kind] ?? 0) + 1;
        checkAnswer(res, request);
        const newErrors = fuzz.errorLines.slice(logged);
        if (newErrors.length > 0) throw new Error(`an error was logged: ${newErrors.join('\n').slice(0, 1500)}`);
        checkPrototypes(objectPrototype);
      }),
      { numRuns, seed },
    );
    checkPrototypes(allPrototypes);
    return { figures };
  } catch (err) {
    return { figures, failure: err instanceof Error ? err.message : String(err) };
  } finally {
    figures.ms = Math.round(performance.now() - started);
    figures.running = fuzz.deps.executor.running;
  }
}
