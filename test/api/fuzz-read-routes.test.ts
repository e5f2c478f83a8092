import { describeRouteFuzz } from '../support/route-fuzz-suite.js';
import { scale } from '../support/scale.js';

/**
 * Every GET route the app registers, fuzzed: path parameters (real ids of the tenant and
 * of another tenant, traversal, bad percent escapes, unicode, far too long) and query parameters
 * (from the route's schema, repeated, unknown, prototype names). 0 answers are 5xx, every 4xx is the
 * error shape with a code of the table, no body carries a stack trace, nothing is logged as an
 * error, Object.prototype is untouched. Routes that take no parameter at all (served files and
 * documents, probes, fixed lists: only an unknown query to fuzz) get fewer runs.
 */
const runs = Number(process.env.FUZZ_RUNS ?? scale(10_000, 50_000));

await describeRouteFuzz({
  suite: 'fuzz-read-routes',
  select: (route) => route.method === 'GET',
  runs,
  queryOnlyRuns: Math.min(runs, scale(500, 10_000)),
});
