import { performance } from 'node:perf_hooks';

/**
 * Probes GET /healthz back to back until stopped; resolves with every latency in ms. A non-200
 * answer fails the probe loop, so a stop() rejects with it.
 */
export function probeHealth(url: string): { stop(): Promise<number[]> } {
  const latencies: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const res = await fetch(`${url}/healthz`);
      await res.arrayBuffer();
      latencies.push(performance.now() - started);
      if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return latencies;
    },
  };
}

/** The middle value (the upper middle of an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}
