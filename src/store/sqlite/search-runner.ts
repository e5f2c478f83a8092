import { Worker } from 'node:worker_threads';
import type { ChunkHit } from '../../domain/corpus.js';
import { AppError } from '../../domain/errors.js';
import { createCorpusSearcher, type SearchRequest } from './corpus-search.js';
import type { Db } from './db.js';

/**
 * Where searches run (one search at the corpus cap once held the event loop 1.4 s). Over a
 * database file: in a pool of worker threads (search-worker.ts), each with its own read-only
 * connection, in arrival order. Over `:memory:` (tests): in this thread, on the service's own
 * connection, since no second connection can open an in-memory database. Both ways a tenant has at
 * most `perTenant` searches running or waiting; one more is refused at once (RATE_LIMITED, 429 with
 * retry-after on the HTTP route, a tool error for a model).
 */

export interface SearchRunnerOptions {
  /** The database file; undefined or `:memory:`: searches run in this thread. */
  databasePath: string | undefined;
  /** Worker threads (SEARCH_WORKERS), started at the first search. */
  workers: number;
  /** Searches one tenant may have running or waiting (SEARCH_CONCURRENCY_PER_TENANT). */
  perTenant: number;
  busyTimeoutMs: number;
}

export interface SearchRunner {
  /** The hits, or undefined when the tenant has no such corpus (deleted meanwhile included). */
  search(request: SearchRequest): Promise<ChunkHit[] | undefined>;
  /** Stops the workers; a search still running rejects. */
  close(): Promise<void>;
}

/** How long a refused client is told to wait. */
const BUSY_RETRY_AFTER_MS = 1_000;

interface Job {
  id: number;
  request: SearchRequest;
  resolve: (hits: ChunkHit[] | undefined) => void;
  reject: (err: unknown) => void;
}

interface Slot {
  worker: Worker;
  job: Job | undefined;
}

type Answer = { id: number; hits: ChunkHit[] | null } | { id: number; error: string };

/**
 * The worker's entry: search-worker.js when running compiled; from the TypeScript sources (tsx) a
 * small ESM file that registers tsx in the worker first, since a worker does not inherit the
 * parent's loader hooks.
 */
function workerEntry(): URL {
  const here = import.meta.url;
  return new URL(here.endsWith('.ts') ? './search-worker-boot.mjs' : './search-worker.js', here);
}

export function createSearchRunner(db: Db, options: SearchRunnerOptions): SearchRunner {
  const running = new Map<string, number>();
  const admit = (tenantId: string): (() => void) => {
    const count = running.get(tenantId) ?? 0;
    if (count >= options.perTenant) {
      throw new AppError(
        'RATE_LIMITED',
        `${count} searches of this tenant are running (SEARCH_CONCURRENCY_PER_TENANT); retry shortly`,
        { retryAfterMs: BUSY_RETRY_AFTER_MS },
      );
    }
    running.set(tenantId, count + 1);
    return () => {
      const left = (running.get(tenantId) ?? 1) - 1;
      if (left > 0) running.set(tenantId, left);
      else running.delete(tenantId);
    };
  };
  const { databasePath } = options;
  const run =
    databasePath === undefined || databasePath === '' || databasePath === ':memory:'
      ? inThread(db)
      : workerPool(databasePath, options);
  return {
    async search(request) {
      const release = admit(request.tenantId);
      try {
        return await run.search(request);
      } finally {
        release();
      }
    },
    close: () => run.close(),
  };
}

function inThread(db: Db): Pick<SearchRunner, 'search' | 'close'> {
  const search = createCorpusSearcher(db);
  return { search: async (request) => search(request), close: async () => {} };
}

function workerPool(databasePath: string, options: SearchRunnerOptions): Pick<SearchRunner, 'search' | 'close'> {
  const slots: Slot[] = [];
  const waiting: Job[] = [];
  let nextId = 1;
  let closed = false;

  const start = (): Slot => {
    const worker = new Worker(workerEntry(), {
      workerData: { databasePath, busyTimeoutMs: options.busyTimeoutMs },
    });
    // The service's lifetime is its server's and its shutdown's, not a worker's.
    worker.unref();
    const slot: Slot = { worker, job: undefined };
    worker.on('message', (answer: Answer) => {
      const job = slot.job;
      if (job === undefined || job.id !== answer.id) return;
      slot.job = undefined;
      if ('error' in answer) job.reject(new Error(`search failed: ${answer.error}`));
      else job.resolve(answer.hits ?? undefined);
      dispatch();
    });
    const lost = (err: unknown) => {
      const index = slots.indexOf(slot);
      if (index >= 0) slots.splice(index, 1);
      slot.job?.reject(err);
      slot.job = undefined;
      dispatch();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`search worker exited (code ${code})`)));
    slots.push(slot);
    return slot;
  };

  const dispatch = (): void => {
    while (!closed && waiting.length > 0) {
      // The whole pool starts with the first search (a worker takes a while to load).
      while (slots.length < options.workers) start();
      const slot = slots.find((s) => s.job === undefined);
      if (slot === undefined) return;
      const job = waiting.shift() as Job;
      slot.job = job;
      slot.worker.postMessage({ id: job.id, request: job.request });
    }
  };

  return {
    search(request) {
      if (closed) return Promise.reject(new AppError('SHUTTING_DOWN', 'the service is shutting down'));
      return new Promise((resolve, reject) => {
        waiting.push({ id: nextId++, request, resolve, reject });
        dispatch();
      });
    },
    async close() {
      closed = true;
      const stopping = new AppError('SHUTTING_DOWN', 'the service is shutting down');
      for (const job of waiting.splice(0)) job.reject(stopping);
      await Promise.all(slots.splice(0).map((slot) => slot.worker.terminate()));
    },
  };
}
