import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { amplificationDefinition } from '../helpers/amplification.js';
import { type ServerProcess, startServer, stopAllServers, tempDir, waitFor } from '../helpers/server-process.js';

/**
 * Issue 17 item 1 against the real server process: while the 9 KB amplification definition runs
 * (50 answers of ~99 KB, then 49 turns of inspect_prior_outputs {count: 50}), GET /healthz answers
 * within 100 ms throughout — it once stalled 6.99 s as ~5 MB results were stored and resent.
 */
let server: ServerProcess;
const tmp = tempDir('baton-amplify-');

beforeAll(async () => {
  server = await startServer({ dbPath: tmp.dbPath() });
});
afterAll(async () => {
  await stopAllServers();
  tmp.cleanup();
});

describe('amplification against the real server process', () => {
  it('/healthz stays under 100 ms while the definition runs to its end', { timeout: 120_000 }, async () => {
    // Warm the JIT and the connection before measuring.
    for (let i = 0; i < 20; i++) await (await fetch(`${server.url}/healthz`)).arrayBuffer();
    const submitStarted = performance.now();
    const res = await fetch(`${server.url}/v1/workflows`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(amplificationDefinition()),
    });
    const submitMs = performance.now() - submitStarted;
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    // One prober back to back; the status is read apart from it, every 200 ms.
    const latencies: number[] = [];
    let ended = false;
    const prober = (async () => {
      while (!ended) {
        const started = performance.now();
        await (await fetch(`${server.url}/healthz`)).arrayBuffer();
        latencies.push(performance.now() - started);
      }
    })();
    let status = 'queued';
    await waitFor(
      'the workflow to end',
      async () => {
        // The list's summaries: the workflow view itself carries 50 outputs of ~99 KB.
        const list = (await (await fetch(`${server.url}/v1/workflows`)).json()) as {
          items: Array<{ id: string; status: string }>;
        };
        status = list.items.find((w) => w.id === id)?.status ?? status;
        return ['completed', 'failed', 'cancelled'].includes(status);
      },
      100_000,
      200,
    );
    ended = true;
    await prober;
    const worst = Math.max(...latencies);
    console.log(
      `amplification: ${status}; submitted in ${submitMs.toFixed(0)} ms; ` +
        `/healthz ${latencies.length} probes, worst ${worst.toFixed(1)} ms`,
    );
    expect(latencies.length).toBeGreaterThan(5);
    expect(worst).toBeLessThan(100);
    expect(server.hasExited).toBe(false);
  });
});
