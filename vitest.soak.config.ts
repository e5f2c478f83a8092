import { defineConfig } from 'vitest/config';

/**
 * `npm run test:soak`: the long variants of the reliability suites (BATON_SOAK=1 raises their
 * counts, test/support/scale.ts) and the load soak, one file at a time so they do not compete.
 */
export default defineConfig({
  test: {
    environment: 'node',
    pool: 'forks',
    fileParallelism: false,
    include: ['test/process/crash-cycles.test.ts', 'test/process/scale-out-kill.test.ts', 'test/soak/**/*.soak.ts'],
    // The scale-out kill test runs over a throwaway PostgreSQL cluster, as in `npm test`.
    globalSetup: ['test/support/postgres-global-setup.ts'],
    testTimeout: 60 * 60_000,
    hookTimeout: 120_000,
  },
});
