import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Db } from './db.js';
import type { GroupCommitter } from './group-commit.js';

/**
 * Moves WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside whichever
 * COMMIT crosses the threshold — copying pages and syncing the database file on the request or
 * executor step that happened to commit (the p99 spikes of the executor benchmark). Here the main
 * connection stops checkpointing and a worker thread, on its own connection, runs PASSIVE
 * checkpoints (they never block writers) on a short interval.
 *
 * The WAL only starts again from its first frame (and is cut to journal_size_limit) at a commit
 * made after a checkpoint copied every frame. Under writes that never pause, a PASSIVE checkpoint
 * has a commit land between its end and the next write, so the WAL grew with everything written
 * (230 MiB in the load soak). When the WAL holds more than QUIET_AFTER_BYTES (so it has not
 * restarted since), the worker asks the group committer to hold its commits, catches up with the last frame, and lets them
 * go: the next commit restarts the WAL. Commits wait for that one catch-up (at most one interval of
 * writes), never for a whole checkpoint, and never longer than MAX_HOLD_MS.
 */
/** WAL bytes past which the checkpointer asks for a short pause of commits to catch up. */
export const QUIET_AFTER_BYTES = 32 * 1024 * 1024;
/** A hold the worker does not end in time is ended here: commits never wait longer. */
const MAX_HOLD_MS = 1_000;

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
/** True from asking the main thread to hold its commits until the catch-up checkpoint ran. */
let quietAsked = false;
/** One PASSIVE checkpoint; counts the frames appended since the last one. Returns its result row. */
function checkpoint() {
  const salt = walSalt();
  const result = db.pragma('wal_checkpoint(PASSIVE)')[0];
  if (result.log < 0) return result;
  const appended = salt !== lastSalt || result.log < lastLog ? result.log : result.log - lastLog;
  lastLog = result.log;
  lastSalt = salt;
  if (appended > 0) {
    frames += appended;
    parentPort.postMessage({ walFrames: frames });
  }
  return result;
}
const timer = setInterval(() => {
  if (stopped || quietAsked) return;
  try {
    const result = checkpoint();
    if (result.log > workerData.quietAfterFrames) {
      quietAsked = true;
      parentPort.postMessage({ quiet: true });
    }
  } catch (err) { parentPort.postMessage({ error: String(err && err.message) }); }
}, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message === 'quiet') {
    try { checkpoint(); } catch (err) { parentPort.postMessage({ error: String(err && err.message) }); }
    quietAsked = false;
    parentPort.postMessage({ resume: true });
    return;
  }
  stopped = true;
  clearInterval(timer);
  db.close();
  parentPort.postMessage({ stopped: true });
});
`;

export function startCheckpointer(
  db: Db,
  options: {
    path: string;
    intervalMs: number;
    /** Held for the catch-up checkpoint; without it the WAL is bounded only between bursts. */
    committer?: Pick<GroupCommitter, 'hold'>;
    onError: (message: string) => void;
  },
): Checkpointer {
  db.pragma('wal_autocheckpoint = 0');
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const quietAfterFrames = Math.floor(QUIET_AFTER_BYTES / (pageSize + 24));
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { driver, path: options.path, intervalMs: options.intervalMs, quietAfterFrames },
  });
  worker.unref();
  let walFrames = 0;
  let release: (() => void) | undefined;
  let holdTimer: NodeJS.Timeout | undefined;
  const endHold = (): void => {
    clearTimeout(holdTimer);
    release?.();
    release = undefined;
  };
  worker.on('message', (message: { error?: string; walFrames?: number; quiet?: boolean; resume?: boolean }) => {
    if (message.error) options.onError(message.error);
    if (message.walFrames !== undefined) walFrames = message.walFrames;
    if (message.quiet) {
      // Without a committer to hold, the worker still gets its answer and tries all the same.
      release = options.committer?.hold();
      holdTimer = setTimeout(endHold, MAX_HOLD_MS);
      holdTimer.unref();
      worker.postMessage('quiet');
    }
    if (message.resume) endHold();
  });
  worker.on('error', (err) => options.onError(err.message));
  let stopping: Promise<void> | undefined;
  return {
    walFrames: () => walFrames,
    stop() {
      endHold();
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
