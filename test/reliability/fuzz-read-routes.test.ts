import { describeRouteFuzz } from '../helpers/route-fuzz.js';
import { scale } from './scale.js';

/**
 * Every GET route the app registers, fuzzed (issue 11): path parameters (real ids of the tenant and
 * of another tenant, traversal, bad percent escapes, unicode, far too long) and query parameters
 * (from the route's schema, repeated, unknown, prototype names). 0 answers are 5xx, every 4xx is the
 * JSON error shape, no body carries a stack trace, nothing is logged as an error, Object.prototype
 * is untouched. Static routes (served files and documents, whose only input is the query) get fewer.
 */
const runs = Number(process.env.FUZZ_RUNS ?? scale(10_000, 50_000));

await describeRouteFuzz({
  suite: 'fuzz-read-routes',
  select: (route) => route.method === 'GET',
  runs,
  staticRuns: Math.min(runs, scale(200, 10_000)),
});
