import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { createCorpusSearcher } from './corpus-search.js';

/**
 * A search worker thread (search-runner.ts): its own read-only connection to the database file, so a
 * search's SQLite work never runs on the service's event loop. It answers one message per request:
 * `{id, hits}` (`hits: null`: no such corpus of that tenant) or `{id, error}`.
 */

const WorkerDataSchema = z.object({ databasePath: z.string().min(1), busyTimeoutMs: z.number().int().min(0) });
const MessageSchema = z.object({
  id: z.number().int(),
  request: z.object({
    tenantId: z.string(),
    corpusSeq: z.number().int().min(1),
    terms: z.array(z.string()).min(1),
    k: z.number().int().min(1),
  }),
});

const port = parentPort;
if (port === null) throw new Error('search-worker.ts runs as a worker thread only');
const { databasePath, busyTimeoutMs } = WorkerDataSchema.parse(workerData);
const db = new Database(databasePath, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs });
const search = createCorpusSearcher(db);

port.on('message', (raw: unknown) => {
  const { id, request } = MessageSchema.parse(raw);
  try {
    port.postMessage({ id, hits: search(request) ?? null });
  } catch (err) {
    port.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
});
