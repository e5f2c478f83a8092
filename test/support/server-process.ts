import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigSchema } from '../../src/config.js';

/**
 * The real service as a child process (`node --import tsx src/main.ts`), for end-to-end tests.
 * Each server logs pino JSON lines to stdout; `startServer` resolves once the "baton is listening"
 * line names the address. Every child started here is tracked: `stopAllServers()` (call it in an
 * afterEach/afterAll) SIGKILLs whatever is still running, and a process `exit` hook does the same
 * if the test worker itself goes away.
 */

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface ServerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServerProcess {
  /** `http://127.0.0.1:<port>` */
  url: string;
  pid: number;
  proc: ChildProcess;
  /** Every stdout and stderr line so far, in arrival order. */
  logs: string[];
  /** The stdout lines that parse as JSON objects (pino's records). */
  records(): Array<Record<string, unknown>>;
  kill(signal?: NodeJS.Signals): boolean;
  exited: Promise<ServerExit>;
  /** True once the process has exited. */
  readonly hasExited: boolean;
}

export interface StartServerOptions {
  /** Extra environment (wins over the defaults below). */
  env?: Record<string, string>;
  dbPath: string;
  /** Default 5000. */
  shutdownGraceMs?: number;
  /** How long to wait for the "baton is listening" line; default 20 s. */
  startTimeoutMs?: number;
  /** `npm start`, as the README starts it, instead of node itself (`proc` is then npm). */
  viaNpmStart?: boolean;
}

const running = new Set<ServerProcess>();

process.on('exit', () => {
  for (const server of running) {
    if (!server.hasExited) server.proc.kill('SIGKILL');
  }
});

/** The parent's environment minus every variable the service reads, so the host cannot leak config in. */
function baseEnv(): Record<string, string> {
  const configKeys = new Set(Object.keys(ConfigSchema.shape));
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !configKeys.has(key)) env[key] = value;
  }
  return env;
}

export async function startServer(options: StartServerOptions): Promise<ServerProcess> {
  const env: Record<string, string> = {
    ...baseEnv(),
    PORT: '0',
    DATABASE_PATH: options.dbPath,
    LOG_LEVEL: 'info',
    SHUTDOWN_GRACE_MS: String(options.shutdownGraceMs ?? 5_000),
    ...options.env,
  };
  const [command, args] = options.viaNpmStart
    ? ['npm', ['start', '--silent']]
    : [process.execPath, ['--import', 'tsx', 'src/main.ts']];
  const proc = spawn(command, args, {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (proc.pid === undefined) throw new Error('could not spawn the server process');

  const logs: string[] = [];
  let exitedFlag = false;
  const exited = new Promise<ServerExit>((resolve) => {
    proc.once('exit', (code, signal) => {
      exitedFlag = true;
      resolve({ code, signal });
    });
  });

  let listening: ((url: string) => void) | undefined;
  const address = new Promise<string>((resolve) => {
    listening = resolve;
  });
  const collect = (stream: NodeJS.ReadableStream | null): void => {
    if (!stream) return;
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      partial += chunk;
      let newline = partial.indexOf('\n');
      while (newline >= 0) {
        const line = partial.slice(0, newline);
        partial = partial.slice(newline + 1);
        logs.push(line);
        if (line.includes('baton is listening')) {
          const record = parseRecord(line);
          if (record && typeof record.address === 'string') listening?.(record.address);
        }
        newline = partial.indexOf('\n');
      }
    });
    stream.on('end', () => {
      if (partial !== '') logs.push(partial);
      partial = '';
    });
  };
  collect(proc.stdout);
  collect(proc.stderr);

  const server: ServerProcess = {
    url: '',
    pid: proc.pid,
    proc,
    logs,
    records: () => logs.map(parseRecord).filter((r): r is Record<string, unknown> => r !== undefined),
    kill: (signal = 'SIGTERM') => (exitedFlag ? false : proc.kill(signal)),
    exited,
    get hasExited() {
      return exitedFlag;
    },
  };
  running.add(server);
  void exited.then(() => running.delete(server));

  const timeoutMs = options.startTimeoutMs ?? 20_000;
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    address.then((url) => ({ kind: 'listening' as const, url })),
    exited.then((exit) => ({ kind: 'exited' as const, exit })),
    new Promise<{ kind: 'timeout' }>((resolve) => {
      timer = setTimeout(() => resolve({ kind: 'timeout' }), timeoutMs);
    }),
  ]);
  clearTimeout(timer);
  if (outcome.kind !== 'listening') {
    proc.kill('SIGKILL');
    await exited;
    const why =
      outcome.kind === 'exited' ? `exited (${JSON.stringify(outcome.exit)})` : `not listening after ${timeoutMs} ms`;
    throw new Error(`baton ${why}; output:\n${logs.join('\n')}`);
  }
  server.url = outcome.url;
  return server;
}

/** pino records at level error (50) or above: a healthy run logs none. */
export function errorRecords(server: ServerProcess): Array<Record<string, unknown>> {
  return server.records().filter((r) => typeof r.level === 'number' && r.level >= 50);
}

/** SIGKILLs every server still running and waits for them to exit. */
export async function stopAllServers(): Promise<void> {
  const all = [...running];
  for (const server of all) server.kill('SIGKILL');
  await Promise.all(all.map((server) => server.exited));
}

function parseRecord(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(line);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** A fresh directory under the OS temp dir for one test file's databases; `cleanup` removes it. */
export function tempDir(prefix = 'baton-e2e-'): { dir: string; dbPath(name?: string): string; cleanup(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return {
    dir,
    dbPath: (name = 'baton.db') => path.join(dir, name),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Polls `check` every `intervalMs` until it returns a value other than undefined/false. */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 10_000,
  intervalMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
