import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Db } from './db.js';

/**
 * Moves WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside whichever
 * COMMIT crosses the threshold — copying pages and syncing the database file on the request or
 * executor step that happened to commit (the p99 spikes of the executor benchmark). Here the main
 * connection stops checkpointing and a worker thread, on its own connection, runs PASSIVE
 * checkpoints (they never block writers) on a short interval.
 */
export interface Checkpointer {
  stop(): Promise<void>;
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { timeout: 1000 });
let stopped = false;
const timer = setInterval(() => {
  if (stopped) return;
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch (err) { parentPort.postMessage({ error: String(err && err.message) }); }
}, workerData.intervalMs);
parentPort.on('message', () => {
  stopped = true;
  clearInterval(timer);
  db.close();
  parentPort.postMessage({ stopped: true });
});
`;

export function startCheckpointer(
  db: Db,
  options: { path: string; intervalMs: number; onError: (message: string) => void },
): Checkpointer {
  db.pragma('wal_autocheckpoint = 0');
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { driver, path: options.path, intervalMs: options.intervalMs },
  });
  worker.unref();
  worker.on('message', (message: { error?: string }) => {
    if (message.error) options.onError(message.error);
  });
  worker.on('error', (err) => options.onError(err.message));
  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        worker.once('exit', () => resolve());
        worker.on('message', (message: { stopped?: boolean }) => {
          if (message.stopped) void worker.terminate();
        });
        worker.postMessage('stop');
      }).then(() => {
        // Back to SQLite's own checkpointing for whatever the connection does next.
        if (db.open) db.pragma('wal_autocheckpoint = 1000');
      });
      return stopping;
    },
  };
}
