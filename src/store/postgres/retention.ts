import {
  BATCH_TREES,
  BATCH_WORKFLOWS,
  paceRetention,
  type RetentionOptions,
  type RetentionSweeper,
  WORKFLOW_OWNED_TABLES,
} from '../retention.js';
import type { PostgresCommitter } from './group-commit.js';
import { foldSweptUsage } from './usage-analytics.js';

/**
 * Retention on PostgreSQL (docs/operations.md#retention): the SQLite sweeper's rules (src/store/retention.ts) — a
 * finished tree whose root ended before the cutoff goes as a whole, in one transaction, at most
 * BATCH_TREES trees a batch, its analytics folded into the swept sums first (as SQLite's roll-ups,
 * which retention leaves alone, keep them). PostgreSQL reuses the space of deleted rows itself (autovacuum), so
 * nothing is handed back by hand: `reclaimedPages` is always 0.
 */
export function createPostgresRetentionSweeper(
  committer: PostgresCommitter,
  options: RetentionOptions,
): RetentionSweeper {
  return paceRetention(options, (cutoff) =>
    committer.transaction(async (tx) => {
      const { rows: roots } = await tx.query<{ id: string }>(
        `SELECT id FROM workflows
          WHERE parent_workflow_id IS NULL AND status IN ('completed', 'failed', 'cancelled') AND ended_at < $1
          ORDER BY ended_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [cutoff, BATCH_TREES],
      );
      const ids: string[] = [];
      let trees = 0;
      if (roots.length > 0) {
        const { rows: children } = await tx.query<{ id: string; root: string; finished: boolean }>(
          `SELECT id, root_workflow_id AS root, status IN ('completed', 'failed', 'cancelled') AS finished
             FROM workflows WHERE root_workflow_id = ANY($1::text[]) AND parent_workflow_id IS NOT NULL`,
          [roots.map((r) => r.id)],
        );
        for (const { id: root } of roots) {
          if (ids.length >= BATCH_WORKFLOWS) break;
          const tree = children.filter((c) => c.root === root);
          // A finished root with a child still going (a cascade not landed yet): left for a later tick.
          if (tree.some((child) => !child.finished)) continue;
          ids.push(root, ...tree.map((child) => child.id));
          trees++;
        }
      }
      let rows = 0;
      if (ids.length > 0) {
        // What the dashboard and model analytics must keep counting, before it goes (usage-analytics.ts).
        await foldSweptUsage(tx, ids);
        for (const [table, column] of WORKFLOW_OWNED_TABLES) {
          const result = await tx.query(`DELETE FROM ${table} WHERE ${column} = ANY($1::text[])`, [ids]);
          rows += result.rowCount ?? 0;
        }
      }
      const retired = await tx.query('DELETE FROM agents WHERE deleted_at IS NOT NULL AND deleted_at < $1', [cutoff]);
      rows += retired.rowCount ?? 0;
      return {
        trees,
        workflows: ids.length,
        rows,
        reclaimedPages: 0,
        // A batch that could delete nothing (every due root waiting on a child) waits for the next tick.
        more: trees > 0 && roots.length === BATCH_TREES,
      };
    }),
  );
}
