import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // e2e tests start the real server as a child process and migrate a fresh SQLite file.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Forks, not threads: better-sqlite3 is a native addon and the e2e tests spawn child processes.
    pool: 'forks',
    reporters: ['default'],
  },
});
