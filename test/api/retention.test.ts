import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { waitForEvent } from '../support/api-fixtures.js';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';
import { createManualClock, type ManualClock } from '../support/manual-clock.js';
import { freshPostgresDatabase } from '../support/postgres-database.js';
import { reportFigures } from '../support/scale.js';
import { tempDir } from '../support/server-process.js';

/**
 * Retention (docs/operations.md#retention): finished workflow trees older than RETENTION_DAYS are deleted with
 * every row they own, a running tree is never touched, and under steady load the database stops
 * growing. A file database (the sizes are real pages) on a manual clock (the window is the clock's);
 * the deletes are checked on PostgreSQL too.
 */

const RETENTION_DAYS = 0.001; // 86.4 s of the manual clock
const RETENTION_MS = RETENTION_DAYS * 24 * 60 * 60 * 1000;

let t: TestApp | undefined;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  await t?.close();
  t = undefined;
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Counts rows of the database under the app, whichever kind (read-only, beside the app's own connections). */
interface RowReader {
  /** Rows per table belonging to the trees of `roots`, over every table with a workflow column. */
  rowsOf(roots: string[]): Promise<Record<string, number>>;
  agentsNamed(name: string): Promise<number>;
}

async function start(clock: ManualClock, kind: 'sqlite' | 'postgres' = 'sqlite') {
  const env: Record<string, string> = { RETENTION_DAYS: String(RETENTION_DAYS) };
  let reader: RowReader;
  let db: Database.Database | undefined;
  if (kind === 'sqlite') {
    const dir = tempDir('baton-retention-');
    cleanups.push(() => dir.cleanup());
    env.DATABASE_PATH = dir.dbPath();
    t = await buildTestApp(env, { clock });
    const sqlite = new Database(env.DATABASE_PATH, { readonly: true });
    cleanups.push(() => {
      sqlite.close();
    });
    db = sqlite;
    reader = {
      rowsOf: async (roots) => rowsOf(sqlite, roots),
      agentsNamed: async (name) =>
        Number(sqlite.prepare('SELECT count(*) FROM agents WHERE name = ?').pluck().get(name)),
    };
  } else {
    const database = await freshPostgresDatabase();
    cleanups.push(() => database.drop());
    env.DATABASE_URL = database.url;
    t = await buildTestApp(env, { clock });
    const pool = new pg.Pool({ connectionString: database.url, max: 2 });
    cleanups.push(() => pool.end());
    reader = postgresReader(pool);
  }
  return { app: t, db, reader };
}

function postgresReader(pool: pg.Pool): RowReader {
  const count = async (sql: string, params: unknown[]) => Number((await pool.query(sql, params)).rows[0]?.n);
  return {
    async rowsOf(roots) {
      const { rows: tables } = await pool.query<{ table_name: string }>(
        `SELECT c.table_name FROM information_schema.columns c
           JOIN information_schema.tables t ON t.table_name = c.table_name AND t.table_schema = c.table_schema
          WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
            AND (c.column_name = 'workflow_id' OR (c.table_name = 'workflows' AND c.column_name = 'id'))`,
      );
      const { rows } = await pool.query<{ id: string }>('SELECT id FROM workflows WHERE root_workflow_id = ANY($1)', [
        roots,
      ]);
      const ids = [...new Set([...roots, ...rows.map((r) => r.id)])];
      const counts: Record<string, number> = {};
      for (const { table_name: table } of tables) {
        const column = table === 'workflows' ? 'id' : 'workflow_id';
        counts[table] = await count(`SELECT count(*) AS n FROM ${table} WHERE ${column} = ANY($1)`, [ids]);
      }
      return counts;
    },
    agentsNamed: (name) => count('SELECT count(*) AS n FROM agents WHERE name = $1', [name]),
  };
}

const agents = {
  a: {
    model: 'sim/haiku',
    tools: ['inspect_current_node'],
    simulate: { responses: [{ toolUse: { name: 'inspect_current_node', input: {} } }, { text: 'done' }] },
  },
  b: { model: 'sim/haiku' },
  slow: { model: 'sim/haiku', simulate: { latencyMs: 600_000 } },
};
const step = (name: string, agent = 'b') => ({ type: 'prompt', name, agent, user: `${name} {{input.n}}` });
const child = (name: string) => ({
  type: 'workflow',
  name,
  definition: { name, root: { type: 'prompt', name: `${name}-step`, agent: 'b', user: 'a child step' } },
});

/** A finished tree with a child, a tool loop, an idempotency key and feedback: rows in every table. */
async function finishedTree(app: TestApp, n: number): Promise<string> {
  const res = await app.app.inject({
    method: 'POST',
    url: '/v1/workflows',
    headers: { 'idempotency-key': `key-${n}` },
    payload: {
      name: 'old',
      input: { n },
      agents,
      options: { cache: false },
      root: { type: 'sequence', name: 'main', steps: [step('tooled', 'a'), child('kid')] },
    },
  });
  expect(res.statusCode, res.body).toBe(202);
  const id = res.json().id as string;
  const done = await waitForStatus(app.app, id);
  expect(done.status, JSON.stringify(done.error)).toBe('completed');
  const feedback = await app.app.inject({
    method: 'POST',
    url: `/v1/workflows/${id}/feedback`,
    payload: { actions: ['commit'] },
  });
  expect(feedback.statusCode, feedback.body).toBeLessThan(300);
  return id;
}

/** Tables (not views) with a workflow column, and the column. */
function workflowTables(db: Database.Database): Array<[string, string]> {
  const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").pluck().all() as string[];
  const found: Array<[string, string]> = [];
  for (const table of tables) {
    const columns = (db.pragma(`table_info(${table})`) as Array<{ name: string }>).map((c) => c.name);
    if (table === 'workflows') found.push([table, 'id']);
    else if (columns.includes('workflow_id')) found.push([table, 'workflow_id']);
  }
  return found;
}

/** Rows per table belonging to the trees of `roots`. */
function rowsOf(db: Database.Database, roots: string[]): Record<string, number> {
  const ids = db
    .prepare('SELECT id FROM workflows WHERE root_workflow_id IN (SELECT value FROM json_each(?))')
    .pluck()
    .all(JSON.stringify(roots)) as string[];
  const json = JSON.stringify([...new Set([...roots, ...ids])]);
  const counts: Record<string, number> = {};
  for (const [table, column] of workflowTables(db)) {
    counts[table] = db
      .prepare(`SELECT count(*) FROM ${table} WHERE ${column} IN (SELECT value FROM json_each(?))`)
      .pluck()
      .get(json) as number;
  }
  return counts;
}

const bytesOf = (db: Database.Database) =>
  (db.pragma('page_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number);

describe.each(['sqlite', 'postgres'] as const)('retention on %s', (kind) => {
  it('deletes finished trees past the window with every row they own; running and recent trees stay whole', async () => {
    const clock = createManualClock();
    const { app, reader } = await start(clock, kind);
    const old = [await finishedTree(app, 1), await finishedTree(app, 2), await finishedTree(app, 3)];

    // A root waiting at its human checkpoint (idle), and a running root whose child already finished.
    const waiting = await app.app.inject({
      method: 'POST',
      url: '/v1/workflows',
      payload: {
        name: 'waiting',
        input: { n: 0 },
        task: { type: 'migration', complexity: 'critical' },
        agents,
        root: step('plan'),
      },
    });
    const running = await app.app.inject({
      method: 'POST',
      url: '/v1/workflows',
      payload: {
        name: 'running',
        input: { n: 0 },
        agents,
        root: { type: 'sequence', name: 'main', steps: [child('kid'), step('s', 'slow')] },
      },
    });
    expect(waiting.statusCode, waiting.body).toBe(202);
    expect(running.statusCode, running.body).toBe(202);
    const waitingId = waiting.json().id as string;
    const runningId = running.json().id as string;
    await waitForEvent(app.app, waitingId, (e) => e.type === 'checkpoint');
    await waitForEvent(app.app, runningId, (e) => e.type === 'agentPromptStart' && e.payload.node === 's');
    const created = await app.app.inject({
      method: 'POST',
      url: '/v1/agents',
      payload: { name: 'gone', config: { model: 'sim/haiku' } },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect((await app.app.inject({ method: 'DELETE', url: '/v1/agents/gone' })).statusCode).toBe(204);

    await clock.advance(RETENTION_MS + 1_000);
    const recent = await finishedTree(app, 4);
    const before = await reader.rowsOf(old);
    const keptBefore = await reader.rowsOf([waitingId, runningId, recent]);
    for (const table of [
      'workflows',
      'nodes',
      'journal',
      'tool_calls',
      'efficiency',
      'rewards',
      'feedback',
      'idempotency_keys',
    ]) {
      expect(before[table], `the old trees have ${table} rows`).toBeGreaterThan(0);
    }

    const swept = await app.deps.retention.sweepNow();
    const after = await reader.rowsOf(old);
    reportFigures('retention sweep', { ...swept, rowsBefore: before, rowsAfter: after });
    expect(after, 'no row of an old tree is left, in any table').toEqual(
      Object.fromEntries(Object.keys(before).map((table) => [table, 0])),
    );
    expect(await reader.rowsOf([waitingId, runningId, recent]), 'running, waiting and recent trees untouched').toEqual(
      keptBefore,
    );
    expect(swept).toMatchObject({ trees: 3, workflows: 6 });
    expect((await app.app.inject({ url: `/v1/workflows/${old[0]}` })).statusCode).toBe(404);
    expect(await reader.agentsNamed('gone'), 'retired tombstone aged out').toBe(0);
    expect((await app.app.inject({ url: `/v1/workflows/${runningId}` })).json().status).toBe('running');
  });
});

describe('retention on sqlite', () => {
  it('under steady load the database stops growing once the window is full', async () => {
    const clock = createManualClock();
    const started = await start(clock);
    const { app } = started;
    const db = started.db as Database.Database;
    const ROUNDS = 14;
    const PER_ROUND = 30;
    const sizes: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const ids: string[] = [];
      for (let i = 0; i < PER_ROUND; i++) {
        const res = await app.app.inject({
          method: 'POST',
          url: '/v1/workflows',
          payload: {
            name: 'steady',
            input: { n: round * PER_ROUND + i },
            agents,
            options: { cache: false },
            root: step('only', 'a'),
          },
        });
        ids.push(res.json().id as string);
      }
      for (const id of ids) await waitForStatus(app.app, id);
      // A round every third of the window: trees live for three to four rounds.
      await clock.advance(RETENTION_MS / 3);
      await app.deps.retention.sweepNow();
      sizes.push(bytesOf(db));
    }
    const early = (sizes[4] ?? 0) - (sizes[0] ?? 0);
    const late = (sizes[ROUNDS - 1] ?? 0) - (sizes[6] ?? 0);
    reportFigures('retention steady load', { sizes, growthRounds0to4: early, growthRounds6to13: late });
    expect(early, 'the window filling up grows the file').toBeGreaterThan(0);
    // Seven rounds after the window filled add no more than a fifth of what four rounds did before.
    expect(late).toBeLessThanOrEqual(early / 5);
  });
});
