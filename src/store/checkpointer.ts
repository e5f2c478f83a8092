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
  /**
   * WAL frames (pages written by commits) appended since the checkpointer started, as of its last
   * check: the `baton_sqlite_wal_frames_total` counter. Each PASSIVE checkpoint reports `log`, the
   * frames now in the WAL; frames appended since the previous check are `log − previous log` while the
   * WAL goes on, or `log` once SQLite restarted it from frame 1 (which it does at the first commit
   * after a checkpoint that copied every frame). A restart is told by the salt in the WAL file's
   * header, which SQLite changes at each restart; it is read just before the checkpoint. Restarts need
   * a complete checkpoint and only this worker checkpoints, so there is at most one between two checks.
   */
  walFrames(): number;
  stop(): Promise<void>;
}

const WORKER_SOURCE = `
const { openSync, readSync, closeSync } = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { timeout: 1000 });
const header = Buffer.alloc(32);
/** Salt-1 and salt-2 of the WAL header (bytes 16-23): new at every restart. Null before the first frame. */
function walSalt() {
  let fd = -1;
  try {
    fd = openSync(workerData.path + '-wal', 'r');
    return readSync(fd, header, 0, 32, 0) === 32 ? header.toString('hex', 16, 24) : null;
  } catch {
    return null;
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}
let stopped = false;
let frames = 0;
let lastLog = 0;
let lastSalt = null;
const timer = setInterval(() => {
  if (stopped) return;
  try {
    const salt = walSalt();
    const log = db.pragma('wal_checkpoint(PASSIVE)')[0].log;
    if (log < 0) return;
    const appended = salt !== lastSalt || log < lastLog ? log : log - lastLog;
    lastLog = log;
    lastSalt = salt;
    if (appended > 0) {
      frames += appended;
      parentPort.postMessage({ walFrames: frames });
    }
  } catch (err) { parentPort.postMessage({ error: String(err && err.message) }); }
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
  let walFrames = 0;
  worker.on('message', (message: { error?: string; walFrames?: number }) => {
    if (message.error) options.onError(message.error);
    if (message.walFrames !== undefined) walFrames = message.walFrames;
  });
  worker.on('error', (err) => options.onError(err.message));
  let stopping: Promise<void> | undefined;
  return {
    walFrames: () => walFrames,
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
