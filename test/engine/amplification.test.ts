import { statSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { AMPLIFIED_PROMPTS, amplificationDefinition } from '../support/amplification.js';
import { allEvents, submit } from '../support/api-fixtures.js';
import { buildTestApp, waitForStatus } from '../support/build-app.js';
import { tempDir } from '../support/server-process.js';

/**
 * Against a real file database: one ~9 KB definition once wrote +935 MB (each ~5 MB
 * tool result stored in its toolInvocation event, its function_span and every later request). With
 * MAX_TOOL_RESULT_BYTES and MAX_CONVERSATION_BYTES at their defaults the database grows < 20 MB —
 * of which ~10 MB are the 50 outputs themselves and their cache entries.
 */
const tmp = tempDir('baton-amplify-');
afterAll(() => tmp.cleanup());

function fileBytes(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

describe('tool-result amplification', () => {
  it('the 9 KB definition grows the database by less than 20 MB; results are cut, then the node fails', {
    timeout: 120_000,
  }, async () => {
    const path = tmp.dbPath();
    const t = await buildTestApp({ DATABASE_PATH: path });
    const body = amplificationDefinition();
    expect(JSON.stringify(body).length).toBeLessThan(10_000);
    const before = fileBytes(path) + fileBytes(`${path}-wal`);
    const res = await submit(t.app, body);
    expect(res.statusCode).toBe(202);
    const id = res.json().id as string;
    const view = await waitForStatus(t.app, id, undefined, 100_000);
    const withWal = fileBytes(path) + fileBytes(`${path}-wal`) - before;
    const reads = (await allEvents(t.app, id)).filter((e) => e.type === 'toolInvocation');
    await t.close();
    const grown = fileBytes(path) + fileBytes(`${path}-wal`) - before;
    console.log(
      `amplification: ${view.status} after ${reads.length} reads; database grew ${(grown / 1e6).toFixed(1)} MB ` +
        `(${(withWal / 1e6).toFixed(1)} MB with the WAL before the closing checkpoint)`,
    );
    expect(grown).toBeLessThan(20e6);
    // The loop stopped at MAX_CONVERSATION_BYTES (1 MiB): 64 KiB results, the 17th passes it.
    expect(view.error).toMatchObject({ code: 'CONVERSATION_TOO_LARGE' });
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.length).toBeLessThanOrEqual(17);
    for (const read of reads) {
      const output = read.payload.output as { cut: string };
      // The cut is noted: how much of the ~5 MB result (50 outputs of 99 000 characters) was kept.
      expect(output.cut).toMatch(/^the first [\d,]+ of about [\d,]+ bytes of the result \(MAX_TOOL_RESULT_BYTES\)$/);
      const total = Number(/about ([\d,]+) bytes/.exec(output.cut)?.[1]?.replaceAll(',', ''));
      expect(total).toBeGreaterThan(AMPLIFIED_PROMPTS * 99_000);
      expect(Buffer.byteLength(JSON.stringify(output))).toBeLessThanOrEqual(64 * 1024);
    }
  });
});
