import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { type Db, WAL_SIZE_LIMIT_BYTES } from './db.js';
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
 * (230 MiB in the load soak). The main thread therefore looks at the WAL file's size every
 * WATCH_MS (one stat; the worker cannot, its timers wait while a checkpoint copies pages): the file
 * grows only while commits append past its end, i.e. while the WAL has not restarted. Once it grows
 * past QUIET_AFTER_BYTES the group committer holds its commits, the worker catches up with the last
 * frame, and the commits go: the next one restarts the WAL. Commits wait for that one catch-up, never for longer than MAX_HOLD_MS. A catch-up a reader
 * kept from completing is not asked for again before the next checkpoint interval.
 */
/**
 * WAL bytes past which commits pause for a catch-up: the size the file is cut back to at each
 * restart, so it stays near it instead of creeping up by what is written while the watch looks.
 */
export const QUIET_AFTER_BYTES = WAL_SIZE_LIMIT_BYTES;
/** How often the worker looks at the WAL file's size. */
const WATCH_MS = 20;
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
  /** Settles once the worker is up and the main connection has stopped checkpointing itself. */
  ready: Promise<void>;
  stop(): Promise<void>;
}

const WORKER_SOURCE = `
const { openSync, readSync, closeSync } = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { timeout: 1000 });
const header = Buffer.alloc(32);
parentPort.postMessage({ ready: true });
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
  if (stopped) return;
  try { checkpoint(); } catch (err) { parentPort.postMessage({ error: String(err && err.message) }); }
}, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message === 'quiet') {
    let complete = false;
    try {
      // PASSIVE, not TRUNCATE: TRUNCATE takes the write lock, and a write made outside the group
      // committer would then wait on the event loop (or fail busy).
      const result = checkpoint();
      complete = result.log >= 0 && result.checkpointed === result.log;
    } catch (err) { parentPort.postMessage({ error: String(err && err.message) }); }
    parentPort.postMessage({ resume: true, complete });
    return;
  }
  stopped = true;
  clearInterval(timer);
  db.close();
  parentPort.postMessage({ stopped: true });
});
`;

interface WorkerMessage {
  ready?: boolean;
  error?: string;
  walFrames?: number;
  resume?: boolean;
  /** With resume: the catch-up copied every frame, so the next commit restarts the WAL. */
  complete?: boolean;
}

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
  // SQLite's own checkpointing goes on until the worker is up (loading the driver in a fresh thread
  // takes a few hundred ms, long enough for a burst to grow the WAL past its bound).
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      driver,
      path: options.path,
      intervalMs: options.intervalMs,
    },
  });
  worker.unref();
  let walFrames = 0;
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  let stopping: Promise<void> | undefined;
  let release: (() => void) | undefined;
  let holdTimer: NodeJS.Timeout | undefined;
  const endHold = (): void => {
    clearTimeout(holdTimer);
    release?.();
    release = undefined;
  };
  let catchingUp = false;
  /** WAL file size at the last watch: it grows only while commits append past its end. */
  let lastSize = 0;
  /** No catch-up is asked for before this time (after one a reader kept from completing). */
  let notBefore = 0;
  const watch = setInterval(() => {
    if (catchingUp || stopping) return;
    const size = statSync(`${options.path}-wal`, { throwIfNoEntry: false })?.size ?? 0;
    const grew = size > lastSize;
    lastSize = size;
    if (!grew || size <= QUIET_AFTER_BYTES || Date.now() < notBefore) return;
    catchingUp = true;
    // Without a committer to hold, the worker still catches up and tries all the same.
    release = options.committer?.hold();
    holdTimer = setTimeout(endHold, MAX_HOLD_MS);
    holdTimer.unref();
    worker.postMessage('quiet');
  }, WATCH_MS);
  watch.unref();
  worker.on('message', (message: WorkerMessage) => {
    if (message.ready) {
      if (db.open && !stopping) db.pragma('wal_autocheckpoint = 0');
      markReady();
    }
    if (message.error) options.onError(message.error);
    if (message.walFrames !== undefined) walFrames = message.walFrames;
    if (message.resume) {
      endHold();
      catchingUp = false;
      lastSize = statSync(`${options.path}-wal`, { throwIfNoEntry: false })?.size ?? 0;
      if (!message.complete) notBefore = Date.now() + options.intervalMs;
    }
  });
  worker.on('error', (err) => options.onError(err.message));
  return {
    walFrames: () => walFrames,
    ready,
    stop() {
      clearInterval(watch);
      markReady();
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
