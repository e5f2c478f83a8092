import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { amplificationDefinition } from '../support/amplification.js';
import { serviceBesideReference } from '../support/bare-fastify-reference.js';
import { median, probeHealth } from '../support/health-prober.js';
import { waitFor } from '../support/server-process.js';

/**
 * Against the real server process: while the 9 KB amplification definition runs
 * (50 answers of ~99 KB, then 49 turns of inspect_prior_outputs {count: 50}), GET /healthz answers
 * within 100 ms throughout — it once stalled 6.99 s as ~5 MB results were stored and resent.
 *
 * The machine is shared: once in a CI run a single probe waited 322 ms while every other probe of
 * the run answered in a few ms, a delay the service does not own (it does not recur). A service that
 * blocks does so in every run of the definition, noise does not, so the definition runs ROUNDS times
 * and the bar holds for the median round's worst probe — or twice a bare fastify /healthz probed in
 * the same rounds, if the machine is that slow; a freeze (one probe past FREEZE_MS) fails in any round.
 */
const ROUNDS = 3;
const BAR_MS = 100;
const FREEZE_MS = 500;
const servers = serviceBesideReference('baton-amplify-');

interface Round {
  status: string;
  submitMs: number;
  probes: number;
  worstMs: number;
  referenceWorstMs: number;
}

/** Runs the definition to its end while both servers' /healthz are probed back to back. */
async function runRound(name: string): Promise<Round> {
  const submitStarted = performance.now();
  const res = await fetch(`${servers.service.url}/v1/workflows`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(amplificationDefinition(name)),
  });
  const submitMs = performance.now() - submitStarted;
  expect(res.status).toBe(202);
  const { id } = (await res.json()) as { id: string };
  const prober = probeHealth(servers.service.url);
  const referenceProber = probeHealth(servers.reference.url);
  let status = 'queued';
  await waitFor(
    'the workflow to end',
    async () => {
      // The list's summaries: the workflow view itself carries 50 outputs of ~99 KB.
      const list = (await (await fetch(`${servers.service.url}/v1/workflows`)).json()) as {
        items: Array<{ id: string; status: string }>;
      };
      status = list.items.find((w) => w.id === id)?.status ?? status;
      return ['completed', 'failed', 'cancelled'].includes(status);
    },
    100_000,
    200,
  );
  const latencies = await prober.stop();
  const referenceLatencies = await referenceProber.stop();
  expect(latencies.length).toBeGreaterThan(5);
  return {
    status,
    submitMs,
    probes: latencies.length,
    worstMs: Math.max(...latencies),
    referenceWorstMs: Math.max(...referenceLatencies),
  };
}

describe('amplification against the real server process', () => {
  it(`/healthz stays under ${BAR_MS} ms while the definition runs to its end (median of ${ROUNDS} rounds)`, {
    timeout: 180_000,
  }, async () => {
    // Warm the JIT and the connections before measuring.
    for (let i = 0; i < 20; i++) {
      await (await fetch(`${servers.service.url}/healthz`)).arrayBuffer();
      await (await fetch(`${servers.reference.url}/healthz`)).arrayBuffer();
    }
    const rounds: Round[] = [];
    for (let r = 0; r < ROUNDS; r++) rounds.push(await runRound(`amplify-${r}`));
    const worst = median(rounds.map((r) => r.worstMs));
    const referenceWorst = median(rounds.map((r) => r.referenceWorstMs));
    console.log(
      `amplification: ${rounds
        .map(
          (r) =>
            `[${r.status}; submitted in ${r.submitMs.toFixed(0)} ms; /healthz ${r.probes} probes, ` +
            `worst ${r.worstMs.toFixed(1)} ms; bare fastify worst ${r.referenceWorstMs.toFixed(1)} ms]`,
        )
        .join(' ')}; median worst ${worst.toFixed(1)} ms, bare fastify ${referenceWorst.toFixed(1)} ms`,
    );
    expect(worst).toBeLessThan(Math.max(BAR_MS, 2 * referenceWorst));
    expect(Math.max(...rounds.map((r) => r.worstMs))).toBeLessThan(FREEZE_MS);
    expect(servers.service.hasExited).toBe(false);
  });
});
