import { defineConfig } from 'vitest/config';

const shared = {
  environment: 'node' as const,
  // e2e tests start the real server as a child process and migrate a fresh SQLite file.
  testTimeout: 30_000,
  hookTimeout: 30_000,
  // Forks, not threads: better-sqlite3 is a native addon and the e2e tests spawn child processes.
  pool: 'forks' as const,
};

/** Run a second time over PostgreSQL (the `postgres` project below). */
const POSTGRES_SUITES = [
  'test/api/auth-tenancy.test.ts',
  'test/api/fuzz-read-routes.test.ts',
  'test/api/fuzz-write-routes.test.ts',
  'test/api/fuzz-regressions.test.ts',
  'test/api/fuzz-schema-arbitrary.test.ts',
  'test/api/idempotency.test.ts',
  'test/process/secrets.test.ts',
];

export default defineConfig({
  test: {
    reporters: ['default'],
    // A throwaway PostgreSQL cluster for the suites that run against PostgreSQL (see the file).
    globalSetup: ['test/support/postgres-global-setup.ts'],
    projects: [
      {
        test: {
          ...shared,
          name: 'suite',
          include: ['test/**/*.test.ts'],
          exclude: ['test/**/*.timing.test.ts'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        // The suites an attacker or a crash would test a store with, again over PostgreSQL: every
        // app they build gets a fresh database of its own (test/support/build-app.ts). Suites that
        // start the real server or read the database themselves say which kinds they run on.
        test: {
          ...shared,
          name: 'postgres',
          include: POSTGRES_SUITES,
          env: { BATON_TEST_DATABASE: 'postgres' },
          sequence: { groupOrder: 0 },
        },
      },
      {
        // The few real-time acceptance checks (latency bars the issues set) run last and one at a
        // time, so other test files competing for the 2 cores cannot move their figures.
        test: {
          ...shared,
          name: 'timing',
          include: ['test/**/*.timing.test.ts'],
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
