import { afterEach, describe, expect, it } from 'vitest';
import { startServer, stopAllServers, tempDir, waitFor } from '../helpers/server-process.js';

/**
 * Issue 18 item 11: a process manager that signals the start command (`npm start`) must stop the
 * server. `tsx src/main.ts` under npm left it listening after SIGTERM and SIGINT: npm passed the
 * signal to its shell, which died without passing it on to tsx and the node process under it.
 */
const dirs: Array<ReturnType<typeof tempDir>> = [];
afterEach(async () => {
  await stopAllServers();
  for (const dir of dirs.splice(0)) dir.cleanup();
});

async function refusesConnections(url: string): Promise<boolean> {
  try {
    await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) });
    return false;
  } catch {
    return true;
  }
}

describe('npm start under a process manager', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} to npm stops the server (graceful shutdown logged)`, { timeout: 60_000 }, async () => {
      const dir = tempDir();
      dirs.push(dir);
      const server = await startServer({ dbPath: dir.dbPath(), viaNpmStart: true, shutdownGraceMs: 2_000 });
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      server.kill(signal);
      await server.exited;
      await waitFor(
        'the server to stop listening',
        async () => ((await refusesConnections(server.url)) ? true : undefined),
        10_000,
      );
      await waitFor(
        'the shutdown to be logged',
        async () => (server.logs.some((line) => line.includes('stopped cleanly')) ? true : undefined),
        5_000,
      );
    });
  }
});
