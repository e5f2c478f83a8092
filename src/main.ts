import { closeListener, LISTENER_CLOSE_MS } from './api/http/listener-close.js';
import { buildApp } from './app.js';
import { databaseLabel, isDevMode, listenHost, loadConfig } from './config.js';
import { createDeps } from './deps.js';

/** Kept for the last commits, closing the database and the exit itself. */
const EXIT_MARGIN_MS = 300;

/**
 * Process entry: loadConfig → createDeps → buildApp → listen; signals and graceful shutdown
 * (docs/design.md#execution).
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const deps = await createDeps(config);
  const app = await buildApp(deps);
  const log = deps.logger.child({ module: 'main' });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    // SHUTDOWN_GRACE_MS is the whole time from the signal to the exit: in-flight calls get it minus
    // what closing the listener takes (at most half of it), and the close gets what is left of it
    // minus a margin for the last commits and closing the database.
    const graceMs = config.SHUTDOWN_GRACE_MS;
    const exitBy = Date.now() + graceMs;
    const callsGraceMs = graceMs - Math.min(LISTENER_CLOSE_MS + EXIT_MARGIN_MS, graceMs / 2);
    log.info({ signal, graceMs, callsGraceMs }, 'shutting down: new requests get 503');
    deps.lifecycle.shuttingDown = true;
    try {
      await deps.executor.shutdown(callsGraceMs);
      await closeListener(app.server, deps.lifecycle, exitBy - Date.now() - EXIT_MARGIN_MS);
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
  log.info({ address, docs: `${address}/docs`, database: databaseLabel(config) }, 'baton is listening');
  await deps.executor.start();
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
