import type { Routing } from './allocation.js';
import type { NodeType, WorkflowDefinition } from './definition.js';
import type { ErrorInfo } from './errors.js';
import type { Status } from './status.js';

export const CHECKPOINT_STATES = ['pending', 'approved', 'rejected'] as const;
export type CheckpointState = (typeof CHECKPOINT_STATES)[number];

/** A critical workflow's approval: pending until a person decides, with the reason given. */
export interface Checkpoint {
  state: CheckpointState;
  reason: string | null;
  /** When it was decided (epoch ms); null while pending. */
  at: number | null;
}

/** What the store holds about one workflow run. Times are epoch milliseconds. */
export interface WorkflowRecord {
  id: string;
  tenantId: string;
  name: string;
  status: Status;
  correlationId: string | null;
  parentWorkflowId: string | null;
  parentNodeId: string | null;
  rootWorkflowId: string;
  /** Nesting depth among child workflows: 0 for a root. */
  depth: number;
  traceId: string;
  definition: WorkflowDefinition;
  output: unknown;
  error: ErrorInfo | null;
  cancelRequested: boolean;
  /**
   * A human checkpoint (docs/design.md#complexity-allocation-selection-and-review): null when the workflow needs no
   * approval.
   */
  checkpoint: Checkpoint | null;
  /** Settled when the workflow was planned; null only on rows stored before migration 0027. */
  routing: Routing | null;
  createdAt: number;
  startedAt: number | null;
  endedAt: number | null;
}

export interface NodeRecord {
  id: string;
  workflowId: string;
  parentId: string | null;
  name: string;
  type: NodeType;
  /** Index among siblings. */
  position: number;
  depth: number;
  status: Status;
  attempts: number;
  output: unknown;
  error: ErrorInfo | null;
  childWorkflowId: string | null;
  /** Cache keys of the node's model calls (served or stored), in call order. */
  cacheKeys: string[];
  startedAt: number | null;
  endedAt: number | null;
}

/** A field set to `undefined` is left as it is. */
export type WorkflowPatch = { id: string } & Partial<
  Pick<WorkflowRecord, 'status' | 'output' | 'error' | 'startedAt' | 'endedAt' | 'cancelRequested' | 'checkpoint'>
>;
export type NodePatch = { id: string } & Partial<
  Pick<
    NodeRecord,
    'status' | 'attempts' | 'output' | 'error' | 'startedAt' | 'endedAt' | 'childWorkflowId' | 'cacheKeys'
  >
>;
