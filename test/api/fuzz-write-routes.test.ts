import { describeRouteFuzz } from '../support/route-fuzz-suite.js';
import { scale } from '../support/scale.js';

/**
 * Every POST, PUT, PATCH and DELETE route the app registers, fuzzed: bodies from the
 * route's JSON Schema, near-valid records, prototype keys, deep nesting, huge strings and wrong
 * content types, with fuzzed path, query and header parameters. 0 answers are 5xx, every 4xx is the
 * error shape with a code of the table, no body carries a stack trace, nothing is logged as an
 * error, Object.prototype is untouched. Seeded per route (the figures print the seed; FUZZ_SEED
 * explores other cases, FUZZ_RUNS changes the count, FUZZ_THREADS=1 runs every route in one app).
 */
const runs = Number(process.env.FUZZ_RUNS ?? scale(10_000, 50_000));

await describeRouteFuzz({
  suite: 'fuzz-write-routes',
  select: (route) => route.method !== 'GET',
  runs,
  queryOnlyRuns: runs,
});
