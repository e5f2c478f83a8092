import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp, waitForStatus } from '../support/build-app.js';
import { createManualClock } from '../support/manual-clock.js';
import { tempDir } from '../support/server-process.js';

/**
 * Retention and the usage roll-ups (docs/operations.md#retention): the sweep deletes a finished tree's raw
 * rows (efficiency records, rewards, journal, tool calls) but not the roll-ups summing them, so
 * GET /v1/dashboard and GET /v1/analytics/models still report the swept workflows' whole hours.
 * Before the roll-ups the same requests answered from the raw rows and lost them with the sweep.
 */

const DAY_MS = 24 * 60 * 60 * 1000;
const RETENTION_DAYS = 1;
const WORKFLOWS = 4;

let t: TestApp | undefined;
let reader: Database.Database | undefined;
const dir = tempDir('baton-rollup-retention-');
afterEach(async () => {
  reader?.close();
  await t?.close();
  dir.cleanup();
});

const agents = {
  a: {
    model: 'sim/haiku',
    tools: ['inspect_current_node'],
    simulate: { responses: [{ toolUse: { name: 'inspect_current_node', input: {} } }, { text: 'done' }] },
  },
};

type Json = Record<string, unknown>;

describe('usage roll-ups outlive retention', () => {
  it('the dashboard and model analytics report swept workflows as before the sweep', async () => {
    const clock = createManualClock();
    t = await buildTestApp({ DATABASE_PATH: dir.dbPath(), RETENTION_DAYS: String(RETENTION_DAYS) }, { clock });
    reader = new Database(dir.dbPath(), { readonly: true });
    const app = t.app;
    const ids: string[] = [];
    for (let n = 0; n < WORKFLOWS; n++) {
      const res = await app.inject({
        method: 'POST',
        url: '/v1/workflows',
        payload: {
          name: 'old',
          input: { n },
          agents,
          options: { cache: false },
          root: { type: 'prompt', name: 'look', agent: 'a', user: `look {{input.n}}` },
        },
      });
      expect(res.statusCode, res.body).toBe(202);
      const id = res.json().id as string;
      expect((await waitForStatus(app, id)).status).toBe('completed');
      const feedback = await app.inject({
        method: 'POST',
        url: `/v1/workflows/${id}/feedback`,
        payload: { actions: ['commit'] },
      });
      expect(feedback.statusCode, feedback.body).toBeLessThan(300);
      ids.push(id);
    }
    const read = async (url: string): Promise<Json> => {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    };
    const figures = async () => {
      const dashboard = await read('/v1/dashboard?days=7');
      const models = await read('/v1/analytics/models');
      return {
        summary: dashboard.summary,
        pillars: dashboard.quality_pillars,
        cost: dashboard.cost,
        cache: dashboard.cache,
        models: (models.models as Json[]).map(({ latency_ms: _latency, ...rest }) => rest),
      };
    };
    const count = (table: string): { n: number } =>
      (reader as Database.Database)
        .prepare(`SELECT count(*) AS n FROM ${table} WHERE workflow_id IN (SELECT value FROM json_each(?))`)
        .get(JSON.stringify(ids)) as { n: number };

    // Two days on: the workflows' hours are whole in the 7-day window, and past retention.
    await clock.advance(2 * DAY_MS);
    const before = await figures();
    expect((before.summary as Json).tasks_completed).toBe(WORKFLOWS);
    expect((before.pillars as Json).tool_reliability_rate).toBe(1);
    expect(before.models).toHaveLength(1);

    const swept = await t.deps.retention.sweepNow();
    expect(swept.trees).toBe(WORKFLOWS);
    for (const table of ['efficiency', 'rewards', 'journal', 'tool_calls']) {
      expect(count(table).n, `${table} rows are swept`).toBe(0);
    }
    expect(await figures()).toEqual(before);
  });
});
