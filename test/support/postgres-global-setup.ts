import type { TestProject } from 'vitest/node';
import { startPostgresCluster } from './postgres-cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The throwaway cluster's maintenance database URL; each test file creates its own database. */
    postgresUrl: string;
  }
}

/**
 * One throwaway PostgreSQL cluster for the whole run (vitest global setup), stopped at the end.
 * Test files never share a database: `freshPostgresDatabase` (postgres-database.ts) creates one
 * per call.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const started = Date.now();
  const cluster = await startPostgresCluster();
  console.log(`postgres: throwaway cluster on 127.0.0.1:${cluster.port} in ${Date.now() - started} ms`);
  project.provide('postgresUrl', cluster.url);
  // Also in the environment the test processes inherit: worker threads a test starts (the route
  // fuzz) have no `inject`, and read it from there.
  process.env.BATON_TEST_POSTGRES_URL = cluster.url;
  return () => cluster.stop();
}
