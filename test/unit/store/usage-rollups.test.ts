import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EfficiencyRecordSchema } from '../../../src/domain/metrics.js';
import type { DashboardSums, ModelSums } from '../../../src/domain/usage-analytics.js';
import { percentile } from '../../../src/metrics/tool-insights.js';
import { type Db, openDatabase } from '../../../src/store/sqlite/db.js';
import { createGroupCommitter } from '../../../src/store/sqlite/group-commit.js';
import { createMetricsRows, createSqliteMetricsStore } from '../../../src/store/sqlite/metrics.repo.js';
import {
  createRawUsageQueries,
  createSqliteUsageAnalyticsStore,
} from '../../../src/store/sqlite/usage-analytics.repo.js';
import { tempDir } from '../../support/server-process.js';
import { writeUsageHistory } from '../../support/usage-history.js';

/**
 * The usage roll-ups (migrations/sqlite/0022) answer the dashboard and model analytics as the raw rows
 * do: over a history written through the triggers, then changed the ways it changes after a
 * workflow ended (feedback replacing a reward, an efficiency record written again with another
 * outcome and day, a journal row appended after the record), every window — whole days, whole
 * hours, partial hours, the empty window — gives the same sums and counts as the queries over the
 * raw rows (createRawUsageQueries), and latency percentiles at most 1/1.1 below. The migration's
 * backfill, run over the same rows, gives the same answers.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NOW = Date.UTC(2026, 5, 15, 13, 37, 12, 345);
const tmp = tempDir('baton-rollups-');
let db: Db;

beforeAll(async () => {
  const dbPath = tmp.dbPath();
  writeUsageHistory({ dbPath, tenantId: 'acme', calls: 3_000, days: 20, now: NOW });
  writeUsageHistory({ dbPath, tenantId: 'other', calls: 400, days: 5, now: NOW });
  db = openDatabase(dbPath, { synchronous: 'NORMAL' });
  db.pragma('foreign_keys = OFF');
  const metrics = createSqliteMetricsStore(db, createGroupCommitter(db));
  for (const i of [0, 7, 300, 1499]) {
    const changed = await metrics.addFeedback('acme', `wf-acme-${i}`, { actions: ['commit'] }, NOW, (_a, r) => ({
      ...r,
      preference_reward: 0.8,
      aggregate_reward: r.aggregate_reward + 0.25,
    }));
    expect(changed?.preference_reward).toBe(0.8);
  }
  // Written again, three days later and failed.
  const text = db.prepare("SELECT record FROM efficiency WHERE workflow_id = 'wf-acme-42'").pluck().get() as string;
  const record = EfficiencyRecordSchema.parse(JSON.parse(text));
  const moved = new Date(Date.parse(record.completed_at) + 3 * DAY + 17 * 60_000).toISOString();
  createMetricsRows(db).apply({
    efficiency: [{ ...record, tenant_id: 'acme', completed_at: moved, outcome: 'failure', efficiency_score: 0.1 }],
  });
  // A journal row after the record: its prompt end counts on the record's day.
  const late = [[99, 'n1', NOW, 'agentPromptEnd', { node: 'n1', attempt: 1, model: 'sim/haiku', duration: 123_456 }]];
  db.prepare(
    "INSERT INTO journal (workflow_id, tenant_id, last_event, events) VALUES ('wf-acme-9', 'acme', 99, ?)",
  ).run(JSON.stringify(late));
});
afterAll(() => {
  db?.close();
  tmp.cleanup();
});

/** Numbers within 1e-9 (relative); everything else equal. */
function expectClose(actual: unknown, expected: unknown, path = '$'): void {
  if (typeof expected === 'number') {
    expect(typeof actual, path).toBe('number');
    expect(Math.abs((actual as number) - expected), path).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(expected)));
  } else if (Array.isArray(expected)) {
    expect(Array.isArray(actual) && actual.length, path).toBe(expected.length);
    for (const [i, e] of expected.entries()) expectClose((actual as unknown[])[i], e, `${path}[${i}]`);
  } else if (expected !== null && typeof expected === 'object') {
    expect(Object.keys(actual as object).sort(), path).toEqual(Object.keys(expected).sort());
    for (const [k, e] of Object.entries(expected))
      expectClose((actual as Record<string, unknown>)[k], e, `${path}.${k}`);
  } else {
    expect(actual, path).toEqual(expected);
  }
}

function windows(): Array<{ from: number; to: number }> {
  const list = [
    { from: 0, to: NOW + 1 },
    { from: NOW + 1 - 7 * DAY, to: NOW + 1 },
    { from: NOW + 1 - 14 * DAY, to: NOW + 1 - 7 * DAY },
    { from: NOW - 30 * DAY, to: NOW + 1 - 90 * 60_000 },
    { from: Date.UTC(2026, 5, 3), to: Date.UTC(2026, 5, 10) },
    { from: Date.UTC(2026, 5, 3, 5), to: Date.UTC(2026, 5, 3, 9) },
    { from: Date.UTC(2026, 5, 3, 5, 10), to: Date.UTC(2026, 5, 3, 5, 50) },
    { from: Date.UTC(2026, 5, 3, 5, 10), to: Date.UTC(2026, 5, 4, 0, 0, 0, 1) },
    { from: NOW, to: NOW },
  ];
  // Arbitrary windows from a fixed seed (a linear congruential generator): reproducible.
  let seed = 17;
  const next = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  for (let i = 0; i < 30; i++) {
    const from = NOW - Math.floor(next() * 22 * DAY);
    list.push({ from, to: from + Math.floor(next() * 10 * DAY) });
  }
  return list;
}

function compareModels(actual: ModelSums[], raw: ModelSums[]): void {
  const expected = raw.filter((m) => m.tasks > 0);
  const strip = (list: ModelSums[]) => list.map(({ durations: _d, ...rest }) => rest);
  expectClose(strip(actual), strip(expected));
  for (const [i, m] of expected.entries()) {
    const got = actual[i] as ModelSums;
    expect(got.durations.reduce((s, d) => s + d.calls, 0)).toBe(m.durations.length);
    for (const p of [0.5, 0.95, 0.99]) {
      const exact = percentile(m.durations, p) as number;
      const figure = percentile(got.durations, p) as number;
      expect(figure).toBeLessThanOrEqual(exact + 1e-9);
      expect(figure).toBeGreaterThanOrEqual(exact / 1.1 - 1e-9);
    }
  }
}

async function compareAll(): Promise<number> {
  const store = createSqliteUsageAnalyticsStore(db);
  const raw = createRawUsageQueries(db);
  let tasks = 0;
  for (const tenant of ['acme', 'other', 'nobody']) {
    for (const w of windows()) {
      const dashboard: DashboardSums = await store.dashboard(tenant, w);
      expectClose(dashboard, raw.dashboard(tenant, w.from, w.to));
      compareModels(await store.models(tenant, w), raw.models(tenant, w.from, w.to));
      tasks += dashboard.tasks;
    }
  }
  return tasks;
}

describe('usage roll-ups', () => {
  it('give the raw rows’ sums in every window, percentiles within the histogram’s 1/1.1', async () => {
    expect(await compareAll()).toBeGreaterThan(10_000);
    // The moved record left its old day and counts as a failure on its new one.
    const raw = createRawUsageQueries(db);
    expect(raw.dashboard('acme', 0, NOW + 1).tasks).toBe(1_500);
  });

  it('the migration’s backfill over the same rows gives the same answers', async () => {
    const migration = readFileSync(
      new URL('../../../migrations/sqlite/0022_usage_rollups.sql', import.meta.url),
      'utf8',
    );
    const backfill = migration.slice(migration.indexOf('-- Backfill:'));
    expect(backfill.length).toBeGreaterThan(100);
    db.transaction(() => {
      for (const table of ['usage_rollup', 'usage_task_model_rollup', 'usage_task_complexity_rollup']) {
        db.exec(`DELETE FROM ${table}`);
      }
      db.exec('DELETE FROM usage_model_rollup; DELETE FROM usage_latency_rollup;');
      db.exec(backfill);
    })();
    expect(await compareAll()).toBeGreaterThan(10_000);
  });
});
