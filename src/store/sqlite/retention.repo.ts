import {
  BATCH_TREES,
  BATCH_WORKFLOWS,
  paceRetention,
  type RetentionOptions,
  type RetentionSweeper,
  type SweepResult,
  WORKFLOW_OWNED_TABLES,
} from '../retention.js';
import type { Db } from './db.js';
import type { GroupCommitter } from './group-commit.js';

/**
 * Retention (docs/operations.md#retention): a finished workflow tree whose root ended more than the
 * retention period ago is deleted with every row it owns, in small commits off the request path.
 *
 * - A tree goes as a whole, in one transaction, and only when every workflow in it is finished: a
 *   child is never deleted apart from its root, and no part of a tree still running is touched.
 * - Owned rows (WORKFLOW_OWNED_TABLES): its workflows, nodes, the journal (events and spans),
 *   reflections, tool calls, retrieval runs, efficiency records, rewards, feedback, agent uses and
 *   idempotency keys. Analytics computed from efficiency rows (rewards, agent selection) therefore
 *   look back over the retention period at most; the usage roll-ups the dashboard and model analytics
 *   read (migrations/sqlite/0022, no workflow_id) outlive the raw rows: they are not listed here and are
 *   never touched. Response cache entries are not owned by a workflow:
 *   they leave by their own TTL (CACHE_TTL_MS). Retired agents' tombstones leave by age too.
 * - Each tick deletes at most BATCH_TREES trees (and stops adding trees once BATCH_WORKFLOWS
 *   workflows are taken), then hands up to RECLAIM_STEP_PAGES free pages back to the file system
 *   (`PRAGMA incremental_vacuum`; the database runs with auto_vacuum = INCREMENTAL, store/sqlite/db.ts),
 *   keeping RECLAIM_KEEP_PAGES free for the writes that follow, so the file stops growing and
 *   shrinks after a burst without paying a page move for every steady-state write.
 * - Ticks are paced by a timer (unref'd) and "how old is old" is read from the injected Clock:
 *   a sleeper on the injected clock would stand forever in the way of tests that drive time.
 */

/** Free pages kept for reuse (8 MiB of 4 KiB pages); those above it are released, this many a tick. */
const RECLAIM_KEEP_PAGES = 2_048;
const RECLAIM_STEP_PAGES = 4_096;

/**
 * Every table holding rows of one workflow, by its workflow column, in a delete order the foreign
 * keys accept (rows referencing nodes and workflows first). test/api/retention.test.ts counts
 * an old tree's rows in every table with a `workflow_id` column: a new such table must be listed here.
 */

export function createRetentionSweeper(db: Db, committer: GroupCommitter, options: RetentionOptions): RetentionSweeper {
  // Repeats the partial index's WHERE clause verbatim (migrations/sqlite/0021) so the planner uses it.
  const dueRoots = db
    .prepare<[number, number], string>(
      `SELECT id FROM workflows
       WHERE parent_workflow_id IS NULL AND status IN ('completed', 'failed', 'cancelled') AND ended_at < ?
       ORDER BY ended_at LIMIT ?`,
    )
    .pluck();
  const descendantsOf = db.prepare<[string], { id: string; finished: number }>(
    `SELECT id, status IN ('completed', 'failed', 'cancelled') AS finished FROM workflows
     WHERE root_workflow_id = ? AND parent_workflow_id IS NOT NULL`,
  );
  const deletes = WORKFLOW_OWNED_TABLES.map(([table, column]) =>
    db.prepare<[string]>(`DELETE FROM ${table} WHERE ${column} IN (SELECT value FROM json_each(?))`),
  );
  const retiredAgents = db.prepare<[number]>('DELETE FROM agents WHERE deleted_at IS NOT NULL AND deleted_at < ?');
  const freePages = db.prepare<[], number>('PRAGMA freelist_count').pluck();

  /** One commit: up to BATCH_TREES due trees, then a bounded release of free pages. */
  const batch = (cutoff: number): SweepResult & { more: boolean } => {
    const roots = dueRoots.all(cutoff, BATCH_TREES);
    const ids: string[] = [];
    let trees = 0;
    for (const root of roots) {
      if (ids.length >= BATCH_WORKFLOWS) break;
      const children = descendantsOf.all(root);
      // A finished root with a child still going (a cascade not landed yet): left for a later tick.
      if (children.some((child) => !child.finished)) continue;
      ids.push(root, ...children.map((child) => child.id));
      trees++;
    }
    let rows = 0;
    if (ids.length > 0) {
      const json = JSON.stringify(ids);
      for (const statement of deletes) rows += statement.run(json).changes;
    }
    rows += retiredAgents.run(cutoff).changes;
    const excess = (freePages.get() ?? 0) - RECLAIM_KEEP_PAGES;
    const reclaimedPages = excess > 0 ? Math.min(excess, RECLAIM_STEP_PAGES) : 0;
    if (reclaimedPages > 0) db.pragma(`incremental_vacuum(${reclaimedPages})`);
    return {
      trees,
      workflows: ids.length,
      rows,
      reclaimedPages,
      // A batch that could delete nothing (every due root waiting on a child) waits for the next tick.
      more: (trees > 0 && roots.length === BATCH_TREES) || excess > reclaimedPages,
    };
  };

  return paceRetention(options, (cutoff) => committer.run(() => batch(cutoff)));
}
