import { parentPort, workerData } from 'node:worker_threads';
import { startFuzzApp } from './fuzz-app.js';
import { fuzzRoute, type RouteResult } from './route-fuzz.js';

/**
 * One thread of the route fuzz (route-fuzz-suite.ts starts it): its own app and fixtures, the
 * routes it was handed fuzzed one after another, each result posted as soon as it is known.
 */
export interface FuzzAssignment {
  routes: Array<{ key: string; runs: number }>;
}

export type FuzzMessage = { key: string; result: RouteResult } | { startupFailure: string };

const post = (message: FuzzMessage) => parentPort?.postMessage(message);
const { routes } = workerData as FuzzAssignment;

try {
  const fuzz = await startFuzzApp();
  for (const { key, runs } of routes) {
    const route = fuzz.routes.find((r) => `${r.method} ${r.url}` === key);
    if (!route) throw new Error(`the app has no route ${key}`);
    post({ key, result: await fuzzRoute(fuzz, route, runs) });
  }
  await fuzz.close();
} catch (err) {
  post({ startupFailure: err instanceof Error ? (err.stack ?? err.message) : String(err) });
}
