import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../support/build-app.js';
import { reportFigures } from '../support/scale.js';
import { tempDir } from '../support/server-process.js';

/**
 * Retired agents leave no versions behind (docs/operations.md#retention): 400 create/delete pairs of an agent
 * with a large system prompt grew the database by 43 MB, every version kept for good.
 */

const PAIRS = 400;
const SYSTEM = 'You review pull requests carefully. '.repeat(2_700); // ~97 KB, under the 100 000-character cap

let t: TestApp;
let reader: Database.Database;
const dir = tempDir('baton-agents-');
beforeAll(async () => {
  t = await buildTestApp({ DATABASE_PATH: dir.dbPath() });
  reader = new Database(dir.dbPath(), { readonly: true });
});
afterAll(async () => {
  reader.close();
  await t.close();
  dir.cleanup();
});

const agentBytes = () =>
  reader.prepare('SELECT count(*) AS rows, coalesce(sum(length(config)), 0) AS bytes FROM agents').get() as {
    rows: number;
    bytes: number;
  };

async function pair(name: string): Promise<number> {
  const created = await t.app.inject({
    method: 'POST',
    url: '/v1/agents',
    payload: { name, config: { model: 'sim/haiku', system: SYSTEM } },
  });
  expect(created.statusCode, created.body).toBe(201);
  expect((await t.app.inject({ method: 'DELETE', url: `/v1/agents/${name}` })).statusCode).toBe(204);
  return created.json().version as number;
}

describe('retired agents', () => {
  // A name has at most MAX_VERSIONS_PER_AGENT (100) versions, retired ones counted.
  it('90 create/delete pairs of one name keep one small row; the numbering goes on', async () => {
    let version = 0;
    for (let i = 0; i < 90; i++) version = await pair('churn');
    const { rows, bytes } = agentBytes();
    reportFigures('agent churn, one name', { pairs: 90, rows, configBytes: bytes, lastVersion: version });
    expect(version).toBe(90);
    expect(rows).toBe(1);
    expect(bytes).toBeLessThan(1024);
  });

  it(`${PAIRS} pairs of distinct names keep no configs (tombstones only, swept by retention)`, {
    timeout: 60_000,
  }, async () => {
    for (let i = 0; i < PAIRS; i++) await pair(`name-${i}`);
    const { rows, bytes } = agentBytes();
    reportFigures('agent churn, distinct names', { pairs: PAIRS, rows, configBytes: bytes });
    expect(rows).toBe(PAIRS + 1);
    expect(bytes).toBeLessThan(16 * 1024);
  });
});
