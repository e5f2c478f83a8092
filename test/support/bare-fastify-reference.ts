import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll } from 'vitest';
import { type ServerProcess, type StartServerOptions, startServer, stopAllServers, tempDir } from './server-process.js';

export interface BareFastify {
  url: string;
  proc: ChildProcess;
}

/**
 * The same-run reference of the timing tests: a bare fastify server (bare-fastify.mjs) in its own
 * process, so the machine's noise is measured apart from the service. Stop it with `proc.kill()`.
 */
export async function startBareFastify(): Promise<BareFastify> {
  const script = new URL('./bare-fastify.mjs', import.meta.url).pathname;
  const proc = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(proc.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
  return { url: chunk.toString().trim(), proc };
}

/**
 * Registers the suite's hooks: the service on a fresh database (after `prepare` has written to it,
 * if given) and the bare fastify reference beside it, both stopped after the suite. The returned
 * object's fields are set once `beforeAll` has run.
 */
export function serviceBesideReference(
  prefix: string,
  options: Omit<StartServerOptions, 'dbPath'> & { prepare?(dbPath: string): void; hookTimeoutMs?: number } = {},
): { service: ServerProcess; reference: BareFastify } {
  const { prepare, hookTimeoutMs, ...start } = options;
  const tmp = tempDir(prefix);
  const servers = {} as { service: ServerProcess; reference: BareFastify };
  beforeAll(async () => {
    prepare?.(tmp.dbPath());
    servers.service = await startServer({ ...start, dbPath: tmp.dbPath() });
    servers.reference = await startBareFastify();
  }, hookTimeoutMs);
  afterAll(async () => {
    servers.reference?.proc.kill('SIGTERM');
    await stopAllServers();
    tmp.cleanup();
  });
  return servers;
}
