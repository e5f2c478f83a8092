import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Executor } from './engine/executor.js';
import type { ApiKeyStore, Clock, EventBus, ModelCatalog, WorkQueue, WorkflowStore } from './domain/ports.js';

/** The one object that holds every collaborator; built by createDeps (below), passed to buildApp. */
export interface Deps {
  config: Config;
  logger: Logger;
  clock: Clock;
  store: WorkflowStore;
  apiKeys: ApiKeyStore;
  events: EventBus;
  queue: WorkQueue;
  models: ModelCatalog;
  executor: Executor;
  /** Flipped by main.ts on SIGTERM/SIGINT: the API answers 503 from then on. */
  lifecycle: { shuttingDown: boolean };
  /** Closes the database and every other resource; idempotent. */
  close(): Promise<void>;
}
