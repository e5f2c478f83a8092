import { statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { startCheckpointer } from '../../../src/store/sqlite/checkpointer.js';
import { type Db, openDatabase } from '../../../src/store/sqlite/db.js';
import { createGroupCommitter } from '../../../src/store/sqlite/group-commit.js';
import { reportFigures } from '../../support/scale.js';
import { tempDir, waitFor } from '../../support/server-process.js';

/**
 * The WAL stays bounded (docs/operations.md#retention): a burst of writes once grew it to 467 MB and the file
 * never shrank. The store's own open + checkpointer, a file database, a burst of 1 MiB commits.
 */

const LIMIT = 64 * 1024 * 1024;
const BURST_MIB = 120;

let db: Db | undefined;
let stop: (() => Promise<void>) | undefined;
const dirs: Array<ReturnType<typeof tempDir>> = [];
afterEach(async () => {
  await stop?.();
  db?.close();
  for (const dir of dirs.splice(0)) dir.cleanup();
});

const walBytes = (path: string): number => {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
};

describe('WAL bound', () => {
  it(`after a ${BURST_MIB} MiB burst the WAL file is back to at most 64 MiB`, { timeout: 60_000 }, async () => {
    const dir = tempDir('baton-wal-');
    dirs.push(dir);
    const path = dir.dbPath();
    const opened = openDatabase(path, { synchronous: 'NORMAL' });
    db = opened;
    const checkpointer = startCheckpointer(opened, { path, intervalMs: 200, onError: () => {} });
    stop = () => checkpointer.stop();
    opened.exec('CREATE TABLE burst (id INTEGER PRIMARY KEY, blob BLOB NOT NULL)');
    const insert = opened.prepare('INSERT INTO burst (blob) VALUES (randomblob(1048576))');
    let peak = 0;
    for (let i = 0; i < BURST_MIB; i++) {
      insert.run();
      peak = Math.max(peak, walBytes(path));
      // One commit per event-loop turn, as the group committer does.
      await new Promise((resolve) => setImmediate(resolve));
    }
    const small = opened.prepare('INSERT INTO burst (blob) VALUES (randomblob(16))');
    // Quiet afterwards: a checkpoint completes, the next commit restarts the WAL from its start.
    const settled = await waitFor(
      'the WAL to be cut back',
      async () => {
        small.run();
        await new Promise((resolve) => setTimeout(resolve, 250));
        const bytes = walBytes(path);
        return bytes <= LIMIT ? bytes : undefined;
      },
      10_000,
      0,
    ).catch(() => walBytes(path));
    reportFigures('wal bound', { burstMiB: BURST_MIB, peakWalBytes: peak, settledWalBytes: settled });
    expect(settled).toBeLessThanOrEqual(LIMIT);
  });

  it('under writes that never pause (the load soak reached 230 MiB) the WAL file stays at most 64 MiB', {
    timeout: 120_000,
  }, async () => {
    const dir = tempDir('baton-wal-');
    dirs.push(dir);
    const path = dir.dbPath();
    const opened = openDatabase(path, { synchronous: 'NORMAL' });
    db = opened;
    const committer = createGroupCommitter(opened);
    const holds: number[] = [];
    const timedCommitter = {
      hold: () => {
        const release = committer.hold();
        const started = performance.now();
        return () => {
          holds.push(performance.now() - started);
          release();
        };
      },
    };
    const checkpointer = startCheckpointer(opened, {
      path,
      intervalMs: 200,
      committer: timedCommitter,
      onError: () => {},
    });
    stop = () => checkpointer.stop();
    opened.exec('CREATE TABLE burst (id INTEGER PRIMARY KEY, blob BLOB NOT NULL)');
    const insert = opened.prepare('INSERT INTO burst (blob) VALUES (randomblob(262144))');
    let peak = 0;
    // 4 writers queueing 256 KiB each through the group committer, one commit after another, for
    // BURST_MIB × 2: a PASSIVE checkpoint never catches up with the last frame on its own.
    const writer = async (count: number): Promise<void> => {
      for (let i = 0; i < count; i++) {
        await committer.run(() => insert.run());
        peak = Math.max(peak, walBytes(path));
      }
    };
    const perWriter = (BURST_MIB * 2 * 4) / 4;
    await Promise.all([writer(perWriter), writer(perWriter), writer(perWriter), writer(perWriter)]);
    reportFigures('wal bound under load', {
      writtenMiB: BURST_MIB * 2,
      peakWalBytes: peak,
      holds: holds.length,
      longestHoldMs: Math.round(Math.max(0, ...holds)),
    });
    expect(peak).toBeLessThanOrEqual(LIMIT);
    expect(holds.length).toBeGreaterThan(0);
  });
});
