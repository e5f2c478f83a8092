import type { Server } from 'node:http';
import { Server as NetServer } from 'node:net';
import { buildApp } from './app.js';
import { isDevMode, listenHost, loadConfig } from './config.js';
import { createDeps, type Deps } from './deps.js';

/** Process entry: loadConfig → createDeps → buildApp → listen; signals and graceful shutdown (DESIGN §4). */
async function main(): Promise<void> {
  const config = loadConfig();
  const deps = await createDeps(config);
  const app = await buildApp(deps);
  const log = deps.logger.child({ module: 'main' });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, graceMs: config.SHUTDOWN_GRACE_MS }, 'shutting down: new requests get 503');
    deps.lifecycle.shuttingDown = true;
    try {
      await deps.executor.shutdown(config.SHUTDOWN_GRACE_MS);
      await closeListener(app.server, deps.lifecycle);
      await app.close();
      await deps.close();
      log.info('stopped cleanly');
      process.exit(0);
    } catch (err) {
      log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  const host = listenHost(config);
  const address = await app.listen({ port: config.PORT, host });
  if (isDevMode(config)) {
    log.warn(
      'no API_KEYS configured: single-tenant dev mode, listening on 127.0.0.1 only (set API_KEYS=tenant:key to serve a network)',
    );
  }
  log.info({ address, docs: `${address}/docs`, database: config.DATABASE_PATH }, 'baton is listening');
  await deps.executor.start();
}

/** Requests are held until no connection has arrived for QUIET_MS (at most MAX_HOLD_MS) before
 * the listener closes; open connections may then make their last request for LINGER_MS. */
const QUIET_MS = 50;
const MAX_HOLD_MS = 500;
const LINGER_MS = 1_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Closes the listener without resetting anyone (DESIGN §4). While draining, every answer closes
 * its connection, so busy clients keep opening new ones, and closing the listener would reset
 * those still in the kernel's accept queue: ECONNRESET for a request the service never saw. So
 * requests are first held (a client waiting for an answer opens no connection) until connections
 * stop arriving, then the listener closes with net.Server#close (http.Server#close would also
 * destroy idle keep-alive sockets at once, racing a client writing on one), the held requests get
 * their 503 with `connection: close`, and clients that reconnect are refused. Whatever is still
 * open after LINGER_MS (clients gone quiet, event streams) is app.close()'s.
 */
async function closeListener(server: Server, lifecycle: Deps['lifecycle']): Promise<void> {
  let release = () => {};
  lifecycle.held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const heldAt = Date.now();
  let lastConnectionAt = heldAt;
  const onConnection = () => {
    lastConnectionAt = Date.now();
  };
  server.on('connection', onConnection);
  while (Date.now() - lastConnectionAt < QUIET_MS && Date.now() - heldAt < MAX_HOLD_MS) await sleep(10);
  server.off('connection', onConnection);
  const drained = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
  lifecycle.held = undefined;
  release();
  await Promise.race([drained, sleep(LINGER_MS)]);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
