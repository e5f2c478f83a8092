import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

/**
 * The same-run reference of the timing tests: a bare fastify server (bare-fastify.mjs) in its own
 * process, so the machine's noise is measured apart from the service. Stop it with `proc.kill()`.
 */
export async function startBareFastify(): Promise<{ url: string; proc: ChildProcess }> {
  const script = new URL('./bare-fastify.mjs', import.meta.url).pathname;
  const proc = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(proc.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
  return { url: chunk.toString().trim(), proc };
}
