import type { WorkflowDefinition } from '../domain/definition.js';
import type { CreateResult } from '../domain/ports.js';
import type { WorkflowRecord } from '../domain/records.js';

/** What the API layer asks of the engine. */
export interface Executor {
  /**
   * Validates the definition (shape already checked by zod; this applies the cross-field rules:
   * unique names, known agents/models/tools, template references, limits — throwing a
   * ValidationError whose `details` name each offending field), persists the workflow with its node
   * rows (and the idempotency key) in one transaction, then enqueues it.
   */
  submit(tenantId: string, definition: WorkflowDefinition, idempotency?: { key: string; bodyHash: string }): Promise<CreateResult>;
  /** Sticky cancel of the workflow and its descendants; aborts in-flight calls. Undefined when not found for the tenant. */
  cancel(tenantId: string, workflowId: string): Promise<WorkflowRecord | undefined>;
  /** Resumes every non-terminal workflow and starts taking work. */
  start(): Promise<void>;
  /** Stops taking work, lets in-flight calls finish for up to `graceMs`, then aborts the rest (they resume at next start). */
  shutdown(graceMs: number): Promise<void>;
  /** Workflows currently executing in this process. */
  readonly running: number;
}
